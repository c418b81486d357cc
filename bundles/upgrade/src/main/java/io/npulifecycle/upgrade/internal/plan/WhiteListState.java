package io.npulifecycle.upgrade.internal.plan;


import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the control plane last learnt of the platform's {@code ImageWhiteList} (the seed's runbook, preflight item 2:
 * {@code kubectl edit imagewhitelist ascend-driver -n cpaas-system}, each new tag under {@code spec.repoList}), and
 * the pure verdict on the tags a rollout needs ({@link #verdict}). Read by {@code preflight.ImageWhiteListReader}; the
 * shape of the object is checked by {@link #parse}: {@code spec} an object, {@code spec.repoList} a list of strings,
 * each an image tag such as {@code 25.5.0-910b-6.6.0-145.0.4.135-oe2403sp3} (the part after the last {@code :} of the
 * driver image).
 *
 * @param status what is known
 * @param namespace namespace of the whitelist (PID {@code io.npulifecycle.upgrade} key {@code imageWhiteListNamespace})
 * @param name name of the whitelist (key {@code imageWhiteListName})
 * @param resource the type discovery found, e.g. {@code imagewhitelists.cpaas.io/v1}; "" when none
 * @param tags the tags of {@code spec.repoList} ({@link Status#LISTED} only)
 * @param asked the tags the rollout needed when the whitelist was read: a needed tag outside it was not asked about
 *        yet, so its absence from {@code tags} proves nothing
 * @param detail the problem ({@link Status#INVALID}: the field and what was expected; {@link Status#FAILED}: the
 *        error), or ""
 */
public record WhiteListState(Status status, String namespace, String name, String resource, Set<String> tags,
        Set<String> asked, String detail) {

    /** Kind served by the platform (found by discovery in whatever group and version serves it). */
    public static final String KIND = "ImageWhiteList";
    /** The resource type as the runbook's {@code kubectl} command names it. */
    public static final String KUBECTL_TYPE = "imagewhitelist";
    /** Default namespace of the whitelist (the seed's runbook). */
    public static final String DEFAULT_NAMESPACE = "cpaas-system";
    /** Default name of the whitelist (the seed's runbook). */
    public static final String DEFAULT_NAME = "ascend-driver";

    /** What is known of the whitelist. */
    public enum Status {
        /** {@code imageWhiteListCheck=false}: not consulted. */
        DISABLED,
        /** The cluster serves no {@code ImageWhiteList} kind: the check does not apply. */
        NOT_SERVED,
        /** Not read yet. */
        NOT_CHECKED,
        /** Read, well formed: {@link WhiteListState#tags()}. */
        LISTED,
        /** The kind is served but the object does not exist. */
        NOT_FOUND,
        /** The object exists but is malformed ({@link WhiteListState#detail()} names the field). */
        INVALID,
        /** Discovery or the read failed ({@link WhiteListState#detail()}). */
        FAILED
    }

    /** Keeps unmodifiable copies of the sets. */
    public WhiteListState {
        tags = Set.copyOf(tags);
        asked = Set.copyOf(asked);
    }

    /**
     * @param status a status without tags
     * @param namespace the whitelist's namespace
     * @param name the whitelist's name
     * @param resource the type found, or ""
     * @param detail the problem, or ""
     * @return the state
     */
    public static WhiteListState of(Status status, String namespace, String name, String resource, String detail) {
        return new WhiteListState(status, namespace, name, resource, Set.of(), Set.of(), detail);
    }

    /**
     * The verdict on the tags a rollout needs.
     *
     * @param ok whether the whitelist lets the rollout go on (listed, not applicable, disabled, nothing needed)
     * @param reason the {@code PreflightPassed} reason when not ok ({@code ImageNotWhitelisted},
     *        {@code ImageWhiteListInvalid}, {@code ImageWhiteListNotFound}, {@code ImageWhiteListCheckFailed}), else ""
     * @param notListed the needed tags the whitelist does not list, in the order of the images
     * @param message what is wrong with the exact command that fixes it, or (ok) what was found, "" when nothing
     *        was needed
     */
    public record Verdict(boolean ok, String reason, List<String> notListed, String message) {
        /** A verdict that holds nothing and says nothing. */
        static final Verdict NONE = new Verdict(true, "", List.of(), "");
    }

    /**
     * @param image a driver image reference {@code <registry>/<path>:<tag>}
     * @return its tag (after the last {@code :} that follows the last {@code /}), or "" when it has none
     */
    public static String tagOf(String image) {
        int colon = image.lastIndexOf(':');
        return colon > image.lastIndexOf('/') ? image.substring(colon + 1) : "";
    }

    /**
     * @param images driver image references
     * @return their tags, in order, without repeats
     */
    public static Set<String> tagsOf(Collection<String> images) {
        Set<String> tags = new LinkedHashSet<>();
        for (String i : images) {
            tags.add(tagOf(i));
        }
        return tags;
    }

    /**
     * Checks the shape of a whitelist object.
     *
     * @param object the object as read ({@code GenericKubernetesResource#getAdditionalProperties()}: {@code spec} and
     *        anything else besides apiVersion, kind and metadata)
     * @param namespace its namespace
     * @param name its name
     * @param resource the type discovery found
     * @param asked the tags the rollout needs now
     * @return {@link Status#LISTED} with the tags, or {@link Status#INVALID} naming the field and what was expected
     */
    public static WhiteListState parse(Map<String, Object> object, String namespace, String name, String resource,
            Set<String> asked) {
        Object spec = object == null ? null : object.get("spec");
        String problem = null;
        Set<String> tags = new LinkedHashSet<>();
        if (spec == null) {
            problem = "no spec (expected spec.repoList, a list of image tags)";
        } else if (!(spec instanceof Map<?, ?> s)) {
            problem = "spec is " + typeOf(spec) + ", expected an object with repoList, a list of image tags";
        } else if (!s.containsKey("repoList") || s.get("repoList") == null) {
            problem = "no spec.repoList (expected a list of image tags)";
        } else if (!(s.get("repoList") instanceof List<?> list)) {
            problem = "spec.repoList is " + typeOf(s.get("repoList")) + ", expected a list of image tags";
        } else {
            List<String> bad = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
                if (list.get(i) instanceof String tag) {
                    tags.add(tag);
                } else {
                    bad.add("spec.repoList[" + i + "] is " + typeOf(list.get(i)));
                }
            }
            if (!bad.isEmpty()) {
                problem = String.join(", ", bad) + ", expected an image tag (a string)";
            }
        }
        if (problem != null) {
            return new WhiteListState(Status.INVALID, namespace, name, resource, Set.of(), asked, problem);
        }
        return new WhiteListState(Status.LISTED, namespace, name, resource, tags, asked, "");
    }

    private static String typeOf(Object o) {
        if (o == null) {
            return "null";
        } else if (o instanceof Map) {
            return "an object";
        } else if (o instanceof List) {
            return "a list";
        } else if (o instanceof String s) {
            return "a string ('" + s + "')";
        } else if (o instanceof Boolean || o instanceof Number) {
            return "a " + (o instanceof Boolean ? "boolean" : "number") + " (" + o + ")";
        }
        return "a " + o.getClass().getSimpleName();
    }

    /** @return {@code ImageWhiteList <namespace>/<name>} */
    String title() {
        return KIND + " " + namespace + "/" + name;
    }

    /** @return the runbook's command: {@code kubectl edit imagewhitelist <name> -n <namespace>} */
    String editCommand() {
        return "kubectl edit " + KUBECTL_TYPE + " " + name + " -n " + namespace;
    }

    /**
     * @param tags tags to add
     * @return the same fix without an editor: a JSON patch appending each tag to {@code spec.repoList}
     */
    String patchCommand(List<String> tags) {
        StringBuilder ops = new StringBuilder();
        for (String t : tags) {
            ops.append(ops.isEmpty() ? "" : ",").append("{\"op\":\"add\",\"path\":\"/spec/repoList/-\",\"value\":\"")
                    .append(t).append("\"}");
        }
        return "kubectl patch " + KUBECTL_TYPE + " " + name + " -n " + namespace + " --type=json -p '[" + ops + "]'";
    }

    /**
     * The verdict on the driver images a rollout needs: every tag must be listed when the cluster serves the kind.
     *
     * @param neededImages the images of the nodes not yet on the target ({@code rollout.ImageVerdict#needed()})
     * @return ok, or the reason and message naming every tag not listed and the command that lists them
     */
    public Verdict verdict(Collection<String> neededImages) {
        return verdictOnTags(List.copyOf(tagsOf(neededImages)));
    }

    /**
     * @param needed the image tags a rollout needs, without repeats
     * @return the verdict of {@link #verdict} on them
     */
    public Verdict verdictOnTags(List<String> needed) {
        if (needed.isEmpty()) {
            return Verdict.NONE;
        }
        return switch (status) {
            case DISABLED -> new Verdict(true, "", List.of(), KIND + " check disabled (imageWhiteListCheck=false)");
            case NOT_SERVED -> new Verdict(true, "", List.of(), KIND + " check does not apply: the cluster serves no "
                    + KIND + " kind" + (detail.isEmpty() ? "" : " (" + detail + ")"));
            case NOT_CHECKED -> new Verdict(false, "ImageWhiteListCheckFailed", List.of(), title() + " not checked yet");
            case NOT_FOUND -> new Verdict(false, "ImageWhiteListNotFound", needed, title() + " not found (the cluster "
                    + "serves " + resource + "): create it with spec.repoList listing " + String.join(", ", needed)
                    + ", or set imageWhiteListNamespace / imageWhiteListName of PID io.npulifecycle.upgrade");
            case INVALID -> new Verdict(false, "ImageWhiteListInvalid", List.of(), title() + " is malformed: " + detail
                    + "; fix it with " + editCommand());
            case FAILED -> new Verdict(false, "ImageWhiteListCheckFailed", List.of(), title() + " could not be read: "
                    + detail);
            case LISTED -> listed(needed);
        };
    }

    private Verdict listed(List<String> needed) {
        List<String> notListed = new ArrayList<>();
        List<String> notAsked = new ArrayList<>();
        for (String t : needed) {
            if (!tags.contains(t)) {
                (asked.contains(t) ? notListed : notAsked).add(t);
            }
        }
        if (!notListed.isEmpty()) {
            return new Verdict(false, "ImageNotWhitelisted", notListed, "driver image tags not in " + title()
                    + " spec.repoList: " + String.join(", ", notListed) + "; add each under spec.repoList: "
                    + editCommand() + " (or " + patchCommand(notListed) + ")");
        }
        if (!notAsked.isEmpty()) {
            return new Verdict(false, "ImageWhiteListCheckFailed", List.of(), title() + " not checked yet for "
                    + String.join(", ", notAsked));
        }
        return new Verdict(true, "", List.of(), "every driver image tag listed in " + title() + " spec.repoList");
    }
}
