package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditLogTest {

    static String line(String stage, String verb, String name, int code, String at) {
        return "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"Metadata\",\"auditID\":\"x\","
                + "\"stage\":\"" + stage + "\",\"requestURI\":\"/api/v1/namespaces/ml/pods/" + name + "/eviction\","
                + "\"verb\":\"" + verb + "\",\"user\":{\"username\":\"system:serviceaccount:npu-operator:cp\"},"
                + "\"objectRef\":{\"resource\":\"pods\",\"namespace\":\"ml\",\"name\":\"" + name + "\","
                + "\"apiVersion\":\"v1\",\"subresource\":\"eviction\"},\"responseStatus\":{\"metadata\":{},\"code\":"
                + code + "},\"requestReceivedTimestamp\":\"" + at + "\",\"stageTimestamp\":\"" + at + "\"}";
    }

    /** Complete requests only; a line being written, or of another stage, is skipped; the fields of the check. */
    @Test
    void readsCompleteRequestsAndChecksCountsAndPacing(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("audit.log"), String.join("\n",
                line("ResponseComplete", "create", "train-0", 429, "2026-12-05T10:00:00.000000Z"),
                line("ResponseStarted", "watch", "train-0", 200, "2026-12-05T10:00:00.050000Z"),
                line("ResponseComplete", "create", "train-0", 429, "2026-12-05T10:00:00.100000Z"),
                line("ResponseComplete", "create", "train-0", 201, "2026-12-05T10:00:00.500000Z"),
                "{\"kind\":\"Event\",\"stage\":\"ResponseCo"));
        List<AuditLog.Request> r = AuditLog.in(dir).read();
        assertEquals(3, r.size());
        assertEquals(new AuditLog.Request("create", "pods", "eviction", "ml", "train-0",
                "system:serviceaccount:npu-operator:cp", 429, Instant.parse("2026-12-05T10:00:00Z")), r.get(0));
        Action.RequestCheck refused = new Action.RequestCheck("create", "pods", "eviction", "ml", "train-0", null, 429,
                null, 2, null, 5.0);
        // 100 ms of wall clock at x60 is 6 simulated seconds: paced
        assertNull(AuditLog.failure(r, refused, 60));
        assertEquals("requests 1 and 2 of 2 were 3.0 simulated s apart (at 2026-12-05T10:00:00Z and "
                + "2026-12-05T10:00:00.100Z)", AuditLog.failure(r, refused, 30));
        assertEquals("saw 1 such request(s)", AuditLog.failure(r, new Action.RequestCheck("create", "pods", "eviction",
                null, null, null, 201, 2, null, null, null), 60));
        assertNull(AuditLog.failure(r, new Action.RequestCheck("create", "pods", "eviction", null, "other", null, null,
                null, null, 0, null), 60));
        assertEquals("saw 0 such request(s)", AuditLog.failure(r, new Action.RequestCheck("create", "pods", null, null,
                null, null, null, null, 1, null, null), 60), "no subresource matches only requests without one");
        assertEquals(0, AuditLog.in(dir.resolve("none")).read().size(), "nothing recorded yet");
    }

    @Test
    void badChecksNameTheField() {
        String head = "cluster: {nodes: 1}\nsteps:\n  - at: 0s\n    ";
        assertEquals(true, ScenarioTest.invalid(head + "expect: {apiRequests: [{verb: post, resource: pods, "
                + "atLeast: 1}]}\n").where().contains("verb 'post' is not one of [get, list, watch, create"));
        assertEquals(true, ScenarioTest.invalid(head + "expect: {apiRequests: [{verb: create, resource: pods}]}\n")
                .where().contains("needs exactly one of count, atLeast, atMost"));
        assertEquals(true, ScenarioTest.invalid(head + "expect: {apiRequests: [{verb: create, atLeast: 1}]}\n")
                .where().contains("resource is missing"));
        assertEquals(true, ScenarioTest.invalid(head + "expect: {apiRequests: [{verb: create, resource: pods, "
                + "atLeast: 1, minIntervalSeconds: -1}]}\n").where().contains("minIntervalSeconds must be a number"));
    }
}
