package io.npulifecycle.manifests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.parser.CelStandardMacro;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Validation;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Variable;

/**
 * Evaluates the CEL expressions of the node agent's {@code ValidatingAdmissionPolicy}
 * ({@code charts/npu-lifecycle/templates/20-admission-node-agent.yaml}, as the build renders it) with Google's CEL for Java against sample admission
 * requests, the way the API server does: match conditions first, then the variables in order (bound as
 * {@code variables}), then every validation; a request is allowed when every validation is true. The variables
 * {@code object}, {@code oldObject} and {@code request} are JSON-shaped maps, typed {@code dyn} (the API server types
 * them from the OpenAPI schema; the expressions use only standard CEL, so they mean the same here).
 */
class AdmissionPolicyCelTest {

    static final String AGENT = "system:serviceaccount:npu-operator:npu-lifecycle-node-agent";
    static final String CLAIM = "authentication.kubernetes.io/node-name";
    static Cel boolCel;
    static Cel anyCel;
    static ValidatingAdmissionPolicy policy;

    @BeforeAll
    static void load() throws Exception {
        policy = Manifests.ofType(ValidatingAdmissionPolicy.class).get(0);
        MapType json = MapType.create(SimpleType.STRING, SimpleType.DYN);
        boolCel = CelFactory.standardCelBuilder().setStandardMacros(CelStandardMacro.STANDARD_MACROS)
                .addVar("object", json).addVar("oldObject", json).addVar("request", json).addVar("variables", json)
                .setResultType(SimpleType.BOOL).build();
        anyCel = CelFactory.standardCelBuilder().setStandardMacros(CelStandardMacro.STANDARD_MACROS)
                .addVar("object", json).addVar("oldObject", json).addVar("request", json).addVar("variables", json)
                .build();
    }

    /** The outcome of one request: not matched, allowed, or denied with the messages of the failed validations. */
    record Outcome(boolean matched, List<String> denials) {
        boolean allowed() {
            return !matched || denials.isEmpty();
        }
    }

    static Object eval(Cel cel, String expr, Map<String, Object> vars) {
        try {
            CelAbstractSyntaxTree ast = cel.compile(expr).getAst();
            return cel.createProgram(ast).eval(vars);
        } catch (Exception e) {
            throw new AssertionError("CEL expression failed: " + expr + ": " + e.getMessage(), e);
        }
    }

    static Outcome admit(Map<String, Object> request, Map<String, Object> oldObject, Map<String, Object> object) {
        Map<String, Object> vars = new HashMap<>();
        vars.put("request", request);
        vars.put("oldObject", oldObject == null ? Map.of() : oldObject);
        vars.put("object", object == null ? Map.of() : object);
        vars.put("variables", Map.of());
        for (var mc : policy.getSpec().getMatchConditions()) {
            if (!(Boolean) eval(boolCel, mc.getExpression(), vars)) {
                return new Outcome(false, List.of());
            }
        }
        Map<String, Object> variables = new LinkedHashMap<>();
        for (Variable v : policy.getSpec().getVariables()) {
            vars.put("variables", Map.copyOf(variables));
            variables.put(v.getName(), eval(anyCel, v.getExpression(), vars));
        }
        vars.put("variables", variables);
        List<String> denials = new ArrayList<>();
        for (Validation v : policy.getSpec().getValidations()) {
            Object ok;
            try {
                ok = eval(boolCel, v.getExpression(), vars);
            } catch (AssertionError e) {
                // the API server: an expression that cannot be evaluated (e.g. no oldObject on CREATE) applies the
                // failure policy, Fail = denied
                assertEquals("Fail", policy.getSpec().getFailurePolicy());
                denials.add("evaluation error (failurePolicy Fail): " + e.getMessage());
                continue;
            }
            if (!(Boolean) ok) {
                denials.add(v.getMessage());
            }
        }
        return new Outcome(true, denials);
    }

    // ---- sample requests ----

    static Map<String, Object> request(String user, String op, String nodeClaim) {
        Map<String, Object> userInfo = new HashMap<>();
        userInfo.put("username", user);
        if (nodeClaim != null) {
            userInfo.put("extra", Map.of(CLAIM, List.of(nodeClaim), "authentication.kubernetes.io/pod-name", List.of("npu-driver-x")));
        }
        Map<String, Object> r = new HashMap<>();
        r.put("operation", op);
        r.put("userInfo", userInfo);
        return r;
    }

    static Map<String, Object> node(String name) {
        Map<String, Object> labels = new HashMap<>(Map.of("kubernetes.io/hostname", name, "openfuyao.com/npu.present", "true",
                "npu.openfuyao.com/chip", "910b", "npu.openfuyao.com/driver-version", "25.2.0",
                "npu.openfuyao.com/driver-upgrade-state", "reboot-required"));
        Map<String, Object> annotations = new HashMap<>(Map.of("npu.openfuyao.com/boot-id", "b1",
                "node.alpha.kubernetes.io/ttl", "0", "npu.openfuyao.com/approve-reboot", "true",
                "npu.openfuyao.com/driver-upgrade-progress", "state=reboot-required,since=2026-11-30T10:00:00Z"));
        Map<String, Object> meta = new HashMap<>(Map.of("name", name, "resourceVersion", "41", "labels", labels,
                "annotations", annotations));
        Map<String, Object> spec = new HashMap<>(Map.of("podCIDR", "10.0.1.0/24", "providerID", "x://" + name));
        return new HashMap<>(Map.of("apiVersion", "v1", "kind", "Node", "metadata", meta, "spec", spec,
                "status", Map.of("nodeInfo", Map.of("bootID", "b1"))));
    }

    /** A deep copy with a change applied to metadata.labels / annotations / spec. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> changed(Map<String, Object> n, java.util.function.Consumer<Map<String, Object>> change) {
        Map<String, Object> copy = (Map<String, Object>) Manifests.SER.unmarshal(Manifests.SER.asJson(n), Map.class);
        ((Map<String, Object>) copy.get("metadata")).put("resourceVersion", "42");
        change.accept(copy);
        return copy;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> labels(Map<String, Object> n) {
        return (Map<String, Object>) ((Map<String, Object>) n.get("metadata")).get("labels");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> annotations(Map<String, Object> n) {
        return (Map<String, Object>) ((Map<String, Object>) n.get("metadata")).get("annotations");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> spec(Map<String, Object> n) {
        return (Map<String, Object>) n.get("spec");
    }

    static void assertDenied(Outcome o, String messagePart) {
        assertTrue(o.matched(), "the policy applies");
        assertFalse(o.allowed(), "denied");
        assertTrue(o.denials().stream().anyMatch(m -> m.contains(messagePart)), o.denials() + " should contain '" + messagePart + "'");
    }

    // ---- cases ----

    @Test
    void ownNodeNpuLabelAndAnnotationChangesAreAllowed() {
        Map<String, Object> old = node("n1");
        Map<String, Object> neu = changed(old, n -> {
            labels(n).put("npu.openfuyao.com/reboot-required", "true");
            labels(n).put("npu.openfuyao.com/driver-version", "25.5.0");
            annotations(n).put("npu.openfuyao.com/reboot-reason", "recovery");
            annotations(n).remove("npu.openfuyao.com/boot-id");
        });
        Outcome o = admit(request(AGENT, "UPDATE", "n1"), old, neu);
        assertTrue(o.matched());
        assertTrue(o.allowed(), o.denials().toString());
    }

    @Test
    void theApprovalConsumptionNodeSyncWritesIsAllowedAndPuttingItBackToo() {
        Map<String, Object> old = node("n1");
        Map<String, Object> consumed = changed(old, n -> {
            annotations(n).remove("npu.openfuyao.com/approve-reboot");
            annotations(n).put("npu.openfuyao.com/rebooting-from-boot-id", "b1");
        });
        assertTrue(admit(request(AGENT, "UPDATE", "n1"), old, consumed).allowed());
        Map<String, Object> restored = changed(consumed, n -> {
            annotations(n).put("npu.openfuyao.com/approve-reboot", "true");
            annotations(n).remove("npu.openfuyao.com/rebooting-from-boot-id");
        });
        assertTrue(admit(request(AGENT, "UPDATE", "n1"), consumed, restored).allowed());
        Map<String, Object> bogus = changed(consumed, n -> annotations(n).put("npu.openfuyao.com/approve-reboot", "yes"));
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), consumed, bogus), "approve-reboot");
    }

    @Test
    void anotherNodeIsDenied() {
        Map<String, Object> old = node("n2");
        Map<String, Object> neu = changed(old, n -> labels(n).put("npu.openfuyao.com/npu-health", "healthy"));
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old, neu), "only the Node it runs on");
    }

    @Test
    void aLabelOrAnnotationOutsideTheNpuPrefixIsDenied() {
        Map<String, Object> old = node("n1");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> labels(n).put("node-role.kubernetes.io/control-plane", ""))), "labels");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> labels(n).put("kubernetes.io/hostname", "evil"))), "labels");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> labels(n).remove("openfuyao.com/npu.present"))), "labels");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> annotations(n).remove("node.alpha.kubernetes.io/ttl"))), "annotations");
    }

    @Test
    void theInstallersAndControlPlanesKeysAreDenied() {
        Map<String, Object> old = node("n1");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> labels(n).remove("npu.openfuyao.com/driver-upgrade-state"))), "labels");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> labels(n).put("npu.openfuyao.com/chip", "310p"))), "labels");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> annotations(n).put("npu.openfuyao.com/driver-upgrade-progress", "state=done"))), "annotations");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> labels(n).put("npu.openfuyao.com/driver-combination", "910b-0000000000"))), "labels");
        // the control plane's cordon record: written by a node agent, it would have an admin's cordon undone
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> annotations(n).put("npu.openfuyao.com/cordoned-by", "npu-lifecycle"))), "annotations");
        // the control plane's recovery reboot grant: written by a node agent, it would reboot an undrained node
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> annotations(n).put("npu.openfuyao.com/recovery-reboot-granted", "b1"))),
                "annotations");
        // the chips of a recovery request are the node agent's to write
        Outcome chips = admit(request(AGENT, "UPDATE", "n1"), old,
                changed(old, n -> annotations(n).put("npu.openfuyao.com/reboot-chips", "0,3")));
        assertTrue(chips.allowed(), chips.denials().toString());
    }

    @Test
    void aSpecChangeIsDeniedCordonIncluded() {
        Map<String, Object> old = node("n1");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old, changed(old, n -> spec(n).put("unschedulable", true))), "spec");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old, changed(old, n -> spec(n).put("taints",
                List.of(Map.of("key", "x", "effect", "NoSchedule"))))), "spec");
    }

    @Test
    void finalizersAndOwnerReferencesAreDenied() {
        Map<String, Object> old = node("n1");
        assertDenied(admit(request(AGENT, "UPDATE", "n1"), old, changed(old,
                n -> ((Map<String, Object>) n.get("metadata")).put("finalizers", List.of("x/y")))), "finalizers");
    }

    @Test
    void aMissingNodeNameClaimIsDenied() {
        Map<String, Object> old = node("n1");
        Map<String, Object> neu = changed(old, n -> labels(n).put("npu.openfuyao.com/npu-health", "healthy"));
        assertDenied(admit(request(AGENT, "UPDATE", null), old, neu), "node-name claim");
        Map<String, Object> r = request(AGENT, "UPDATE", null);
        ((Map<String, Object>) r.get("userInfo")).put("extra", Map.of(CLAIM, List.of()));
        assertDenied(admit(r, old, neu), "node-name claim");
    }

    @Test
    void createDeleteAndOtherSubresourcesAreDenied() {
        Map<String, Object> old = node("n1");
        assertDenied(admit(request(AGENT, "CREATE", "n1"), null, node("n1")), "only update");
        assertDenied(admit(request(AGENT, "DELETE", "n1"), old, null), "only update");
        Map<String, Object> proxy = request(AGENT, "UPDATE", "n1");
        proxy.put("subResource", "proxy");
        assertDenied(admit(proxy, old, changed(old, n -> { })), "no subresource but status");
    }

    static Map<String, Object> condition(String type, String status, String reason) {
        return Map.of("type", type, "status", status, "reason", reason, "message", "m",
                "lastTransitionTime", "2026-12-05T00:00:00Z");
    }

    /** A node as the kubelet reports it: its own conditions, capacity, addresses. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> kubeletNode(String name) {
        Map<String, Object> n = node(name);
        n.put("status", new HashMap<>(Map.of("nodeInfo", Map.of("bootID", "b1"),
                "capacity", Map.of("cpu", "192", "huawei.com/Ascend910", "8"),
                "allocatable", Map.of("cpu", "190", "huawei.com/Ascend910", "8"),
                "addresses", List.of(Map.of("type", "InternalIP", "address", "10.0.0.1")),
                "conditions", new ArrayList<>(List.of(condition("Ready", "True", "KubeletReady"),
                        condition("MemoryPressure", "False", "KubeletHasSufficientMemory"))))));
        return n;
    }

    @SuppressWarnings("unchecked")
    static List<Object> conditions(Map<String, Object> n) {
        return (List<Object>) ((Map<String, Object>) n.get("status")).get("conditions");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> status(Map<String, Object> n) {
        return (Map<String, Object>) n.get("status");
    }

    @Test
    void theNpuHealthyConditionOfItsOwnNodeIsAllowedThroughNodesStatus() {
        Map<String, Object> old = kubeletNode("n1");
        Map<String, Object> status = request(AGENT, "UPDATE", "n1");
        status.put("subResource", "status");
        Map<String, Object> wedged = changed(old, n -> conditions(n).add(condition("NpuHealthy", "False", "ChipWedged")));
        Outcome o = admit(status, old, wedged);
        assertTrue(o.allowed(), o.denials().toString());
        Map<String, Object> healed = changed(wedged, n -> {
            conditions(n).removeIf(c -> "NpuHealthy".equals(((Map<?, ?>) c).get("type")));
            conditions(n).add(condition("NpuHealthy", "True", "ChipsHealthy"));
        });
        assertTrue(admit(status, wedged, healed).allowed());
        // removed (the uninstall is the control plane's, but a node agent clearing its own condition is harmless)
        assertTrue(admit(status, wedged, changed(wedged, n -> conditions(n).removeIf(c -> "NpuHealthy".equals(((Map<?, ?>) c).get("type"))))).allowed());
        // on another node: denied
        Map<String, Object> other = kubeletNode("n2");
        assertDenied(admit(status, other, changed(other, n -> conditions(n).add(condition("NpuHealthy", "False", "ChipWedged")))),
                "only the Node it runs on");
    }

    @Test
    void throughNodesStatusEverythingButNpuHealthyIsDenied() {
        Map<String, Object> old = kubeletNode("n1");
        Map<String, Object> status = request(AGENT, "UPDATE", "n1");
        status.put("subResource", "status");
        String msg = "only the NodeCondition NpuHealthy";
        assertDenied(admit(status, old, changed(old, n -> conditions(n).set(0, condition("Ready", "False", "Faked")))), msg);
        assertDenied(admit(status, old, changed(old, n -> conditions(n).add(condition("NetworkUnavailable", "True", "X")))), msg);
        assertDenied(admit(status, old, changed(old, n -> conditions(n).add(condition("NpuHealthy", "Maybe", "X")))), msg);
        assertDenied(admit(status, old, changed(old, n -> status(n).put("capacity", Map.of("cpu", "192", "huawei.com/Ascend910", "16")))), msg);
        assertDenied(admit(status, old, changed(old, n -> status(n).put("allocatable", Map.of("cpu", "190")))), msg);
        assertDenied(admit(status, old, changed(old, n -> status(n).remove("addresses"))), msg);
        assertDenied(admit(status, old, changed(old, n -> status(n).put("nodeInfo", Map.of("bootID", "b2")))), msg);
        assertDenied(admit(status, old, changed(old, n -> n.put("status", Map.of()))), msg);
        // and a status write still may not touch the spec
        assertDenied(admit(status, old, changed(old, n -> spec(n).put("unschedulable", true))), "spec");
    }

    @Test
    void otherUsersAreNotMatched() {
        Map<String, Object> old = node("n1");
        Outcome o = admit(request("system:serviceaccount:npu-operator:npu-lifecycle-control-plane", "UPDATE", null), old,
                changed(old, n -> spec(n).put("unschedulable", true)));
        assertFalse(o.matched(), "the policy is only about the node agent's ServiceAccount");
        assertFalse(admit(request("system:node:n1", "UPDATE", "n1"), old, changed(old, n -> labels(n).put("a", "b"))).matched());
    }

    @Test
    void everyValidationHasAMessageAndTheListIsComplete() {
        assertEquals("Fail", policy.getSpec().getFailurePolicy());
        assertEquals(9, policy.getSpec().getValidations().size(), "a new validation needs a case here");
        for (Validation v : policy.getSpec().getValidations()) {
            assertTrue(v.getMessage() != null && !v.getMessage().isBlank(), v.getExpression());
        }
    }
}
