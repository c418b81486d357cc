package io.npulifecycle.rebooter.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.api.reboot.RebootExecutor;
import io.npulifecycle.testing.support.Configs;

/** The executor's configuration: every refused value named with its key; none by default. */
class ExecutorComponentTest {

    private static ExecutorComponent.Config config(Map<String, Object> values) {
        return Configs.of(ExecutorComponent.Config.class, values);
    }

    @Test
    void theDefaultIsNoExecutorAndAccepted() {
        List<ConfigurationRefusals.Refusal> refused = new ArrayList<>();
        assertNull(ExecutorComponent.executor(config(Map.of()), refused));
        assertEquals(List.of(), refused);
    }

    @Test
    void everyRefusedValueIsNamed() {
        List<ConfigurationRefusals.Refusal> refused = new ArrayList<>();
        assertNull(ExecutorComponent.executor(config(Map.of("type", "kexec")), refused));
        assertEquals(List.of(new ConfigurationRefusals.Refusal("type", "kexec",
                "'kexec' is not none, libc or command")), refused);
        refused.clear();
        assertNull(ExecutorComponent.executor(config(Map.of("type", "command", "command", new String[0],
                "commandTimeoutSeconds", 0)), refused));
        assertEquals(List.of("command", "commandTimeoutSeconds"),
                refused.stream().map(ConfigurationRefusals.Refusal::key).toList());
    }

    @Test
    void aCommandFromTheDefaultsIsTheExecutor() {
        List<ConfigurationRefusals.Refusal> refused = new ArrayList<>();
        RebootExecutor ex = ExecutorComponent.executor(config(Map.of("type", "command")), refused);
        assertEquals(List.of(), refused);
        assertTrue(ex.describe().contains("systemctl"), ex.describe());
    }
}
