package io.npulifecycle.api.markers;

import java.util.List;

import io.npulifecycle.api.management.Description;

/**
 * Management view of the marker store, object name {@code io.npulifecycle:type=Markers}.
 */
@Description("The marker store (io.npulifecycle:type=Markers): the marker files on the host that tell the rebooter and the "
        + "driver loader what to do.")
public interface MarkersMXBean {

    /** Object name of the marker store MBean. */
    String OBJECT_NAME = "io.npulifecycle:type=Markers";

    /** @return the host folder */
    @Description("The host folder of the marker files (e.g. /run/npu-operator).")
    String getFolder();

    /** @return the current boot id */
    @Description("The current boot id (from the kernel's boot_id file).")
    String getBootId();

    /** @return whether the folder exists and is writable, checked now */
    @Description("Whether the folder exists and is writable, checked now.")
    boolean isWritable();

    /** @return the last write/remove error (message naming the path), or {@code null} */
    @Description("The last write/remove error (message naming the path), or null.")
    String getLastError();

    /** @return the change counter */
    @Description("Marker changes (writes and removals) seen by the store since start (a count).")
    long getChangeCount();

    /** @return every marker file with its status and content, read now */
    @Description("Every marker file with its status and content, read now.")
    List<MarkerView> getMarkers();

    /** One marker file as seen by the MBean. */
    final class MarkerView {
        private final String name;
        private final String path;
        private final String status;
        private final boolean valid;
        private final String bootId;
        private final String writtenAt;
        private final String writer;
        private final String content;
        private final String error;

        /**
         * @param read the read to show
         */
        public MarkerView(MarkerRead read) {
            this.name = read.name();
            this.path = String.valueOf(read.path());
            this.status = read.status().name();
            this.valid = read.status() != MarkerStatus.INVALID;
            Marker m = read.marker();
            this.bootId = m == null ? null : m.bootId();
            this.writtenAt = m == null || m.writtenAt() == null ? null : m.writtenAt().toString();
            this.writer = m == null ? null : m.writer();
            this.content = m == null ? null : m.content().toString();
            this.error = read.error();
        }

        /** @return marker name */
        public String getName() {
            return name;
        }

        /** @return host path */
        public String getPath() {
            return path;
        }

        /** @return {@link MarkerStatus} name */
        public String getStatus() {
            return status;
        }

        /** @return {@code false} when the file cannot be parsed */
        public boolean isValid() {
            return valid;
        }

        /** @return boot id it was written under, or {@code null} */
        public String getBootId() {
            return bootId;
        }

        /** @return ISO-8601 write time, or {@code null} */
        public String getWrittenAt() {
            return writtenAt;
        }

        /** @return writer, or {@code null} */
        public String getWriter() {
            return writer;
        }

        /** @return content as {@code {key=value, ...}}, or {@code null} */
        public String getContent() {
            return content;
        }

        /** @return why it is invalid or stale, or {@code null} */
        public String getError() {
            return error;
        }
    }
}
