package io.npulifecycle.upgrade.internal.plan;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;
import io.npulifecycle.api.upgrade.spec.SpecReader;

/**
 * Everything the planner observed, built with {@link #builder()}.
 *
 * @param generation metadata.generation of the CR; may be null
 * @param spec the parsed spec
 * @param paused the CR carries annotation {@code npu.openfuyao.com/paused=true}
 * @param previous the last status written (or read from the CR); may be null
 * @param nodes the NPU nodes
 * @param driverPods the driver pod of each node (by node name), newest first wins
 * @param npuWorkloads pods other than driver pods requesting an NPU resource, by node name, as namespace/name
 * @param images results of the registry preflight by image reference; absent = not checked yet
 * @param daemonSetImages image of each existing driver DaemonSet by name
 * @param recentlyDeletedPods uids of driver pods this controller deleted recently (no second delete)
 * @param now the current time
 * @param stateAges per node name: how long the node has been in the state of its progress annotation, as the
 *        controller measured it with its monotonic clock ({@code rollout.DeadlineClock}); a node absent here is aged
 *        by the wall clock ({@code now - since}). The in-flight deadlines use it, so a step of the wall clock neither
 *        fires nor stretches them.
 * @param whiteList what the preflight last read of the platform's ImageWhiteList ({@code preflight.ImagePreflight})
 * @param drainLeft per node being drained: the pods of its drain still on it ({@code drain.DrainScope}), each as
 *        {@code namespace/name}, with what blocks it when known ({@code (PodDisruptionBudget ns/name)}); a node
 *        absent here has none left
 * @param blockingPods per node: its non-terminal pods that {@code blockingPodSelector} matches, each as
 *        {@code namespace/name} ({@link PodFacts#blocking}); a node absent here has none
 */
public record Inputs(Long generation, SpecReader.Result spec, boolean paused, NpuOperatorCtlStatus previous,
        Collection<Node> nodes, Map<String, Pod> driverPods, Map<String, List<String>> npuWorkloads,
        Map<String, ImageStatus> images, Map<String, String> daemonSetImages, Set<String> recentlyDeletedPods,
        Instant now, Map<String, Duration> stateAges, WhiteListState whiteList,
        Map<String, List<String>> drainLeft, Map<String, List<String>> blockingPods) {

    /** The ImageWhiteList state of a controller whose check is off: every tag passes. */
    private static final WhiteListState WHITE_LIST_DISABLED = WhiteListState.of(WhiteListState.Status.DISABLED,
            WhiteListState.DEFAULT_NAMESPACE, WhiteListState.DEFAULT_NAME, "", "");

    /**
     * @return a builder with the defaults: no generation, not paused, no previous status, no node, pod, workload,
     *         registry answer, DaemonSet or recent delete, no measured state age (every deadline by the wall clock),
     *         the ImageWhiteList check disabled (status {@code DISABLED}: every tag passes), no pod left to drain
     *         and no blocking pod; {@code spec} and {@code now} have no default
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link Inputs}; each setter replaces its default ({@link Inputs#builder()}) and returns the builder. */
    public static final class Builder {
        private Long generation;
        private SpecReader.Result spec;
        private boolean paused;
        private NpuOperatorCtlStatus previous;
        private Collection<Node> nodes = List.of();
        private Map<String, Pod> driverPods = Map.of();
        private Map<String, List<String>> npuWorkloads = Map.of();
        private Map<String, ImageStatus> images = Map.of();
        private Map<String, String> daemonSetImages = Map.of();
        private Set<String> recentlyDeletedPods = Set.of();
        private Instant now;
        private Map<String, Duration> stateAges = Map.of();
        private WhiteListState whiteList = WHITE_LIST_DISABLED;
        private Map<String, List<String>> drainLeft = Map.of();
        private Map<String, List<String>> blockingPods = Map.of();

        private Builder() {
        }

        /** @param v see {@link Inputs#generation()} @return this builder */
        public Builder generation(Long v) {
            generation = v;
            return this;
        }

        /** @param v see {@link Inputs#spec()} @return this builder */
        public Builder spec(SpecReader.Result v) {
            spec = v;
            return this;
        }

        /** @param v see {@link Inputs#paused()} @return this builder */
        public Builder paused(boolean v) {
            paused = v;
            return this;
        }

        /** @param v see {@link Inputs#previous()} @return this builder */
        public Builder previous(NpuOperatorCtlStatus v) {
            previous = v;
            return this;
        }

        /** @param v see {@link Inputs#nodes()} @return this builder */
        public Builder nodes(Collection<Node> v) {
            nodes = v;
            return this;
        }

        /** @param v see {@link Inputs#driverPods()} @return this builder */
        public Builder driverPods(Map<String, Pod> v) {
            driverPods = v;
            return this;
        }

        /** @param v see {@link Inputs#npuWorkloads()} @return this builder */
        public Builder npuWorkloads(Map<String, List<String>> v) {
            npuWorkloads = v;
            return this;
        }

        /** @param v see {@link Inputs#images()} @return this builder */
        public Builder images(Map<String, ImageStatus> v) {
            images = v;
            return this;
        }

        /** @param v see {@link Inputs#daemonSetImages()} @return this builder */
        public Builder daemonSetImages(Map<String, String> v) {
            daemonSetImages = v;
            return this;
        }

        /** @param v see {@link Inputs#recentlyDeletedPods()} @return this builder */
        public Builder recentlyDeletedPods(Set<String> v) {
            recentlyDeletedPods = v;
            return this;
        }

        /** @param v see {@link Inputs#now()} @return this builder */
        public Builder now(Instant v) {
            now = v;
            return this;
        }

        /** @param v see {@link Inputs#stateAges()} @return this builder */
        public Builder stateAges(Map<String, Duration> v) {
            stateAges = v;
            return this;
        }

        /** @param v see {@link Inputs#whiteList()} @return this builder */
        public Builder whiteList(WhiteListState v) {
            whiteList = v;
            return this;
        }

        /** @param v see {@link Inputs#drainLeft()} @return this builder */
        public Builder drainLeft(Map<String, List<String>> v) {
            drainLeft = v;
            return this;
        }

        /** @param v see {@link Inputs#blockingPods()} @return this builder */
        public Builder blockingPods(Map<String, List<String>> v) {
            blockingPods = v;
            return this;
        }

        /**
         * @return the inputs
         * @throws NullPointerException when {@code spec} or {@code now} was not set, or a collection was set to null
         */
        public Inputs build() {
            return new Inputs(generation, Objects.requireNonNull(spec, "spec"), paused, previous,
                    Objects.requireNonNull(nodes, "nodes"), Objects.requireNonNull(driverPods, "driverPods"),
                    Objects.requireNonNull(npuWorkloads, "npuWorkloads"), Objects.requireNonNull(images, "images"),
                    Objects.requireNonNull(daemonSetImages, "daemonSetImages"),
                    Objects.requireNonNull(recentlyDeletedPods, "recentlyDeletedPods"),
                    Objects.requireNonNull(now, "now"), Objects.requireNonNull(stateAges, "stateAges"),
                    Objects.requireNonNull(whiteList, "whiteList"), Objects.requireNonNull(drainLeft, "drainLeft"),
                    Objects.requireNonNull(blockingPods, "blockingPods"));
        }
    }
}
