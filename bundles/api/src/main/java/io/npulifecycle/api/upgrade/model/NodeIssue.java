package io.npulifecycle.api.upgrade.model;

import java.util.Objects;

/** A node named in the status with the reason (a failed or a held node). */
public class NodeIssue {
    private String name;
    private String reason;

    public NodeIssue() {
    }

    public NodeIssue(String name, String reason) {
        this.name = name;
        this.reason = reason;
    }

    /** @return node name */
    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    /** @return human-readable reason */
    public String getReason() {
        return reason;
    }

    public void setReason(String reason) {
        this.reason = reason;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NodeIssue n && Objects.equals(name, n.name) && Objects.equals(reason, n.reason);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, reason);
    }

    @Override
    public String toString() {
        return name + ": " + reason;
    }
}
