package io.npulifecycle.rebooter.internal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import com.sun.jna.Library;
import com.sun.jna.Native;

import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.api.management.RefusalReporter;
import io.npulifecycle.api.reboot.RebootExecutor;

/**
 * Registers the product's {@link RebootExecutor}, PID {@value #PID}, only when explicitly configured:
 * {@code type=libc} ({@code sync()} then {@code reboot(RB_AUTOBOOT)} through JNA) or {@code type=command} (the
 * {@code command} array, e.g. {@code nsenter,-t,1,-m,-u,-i,-n,-p,--,systemctl,reboot}). The default {@code type=none}
 * registers nothing: on a first install the rebooter decides and says what it would do, visibly (MBean
 * {@code Executor}, log), but never reboots. Every refused value is logged and reported to
 * {@link ConfigurationRefusals}, and the previous configuration kept.
 */
@Component(configurationPid = ExecutorComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL, service = {})
@Designate(ocd = ExecutorComponent.Config.class)
public class ExecutorComponent {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.rebooter.executor";
    private static final System.Logger LOG = System.getLogger(ExecutorComponent.class.getName());
    /** {@code RB_AUTOBOOT} from {@code <sys/reboot.h>} (Linux {@code LINUX_REBOOT_CMD_RESTART}). */
    static final int RB_AUTOBOOT = 0x01234567;

    /** Configuration. */
    @ObjectClassDefinition(name = "npu-lifecycle reboot executor", description = "How the node is rebooted. none = never (default).")
    public @interface Config {
        /** @return type */
        @AttributeDefinition(name = "Reboot method", description = "none (never reboot: the default), libc (sync + reboot(RB_AUTOBOOT) via JNA), command.",
                options = {@org.osgi.service.metatype.annotations.Option(value = "none"),
                    @org.osgi.service.metatype.annotations.Option(value = "libc"),
                    @org.osgi.service.metatype.annotations.Option(value = "command")})
        String type() default "none";

        /** @return command */
        @AttributeDefinition(name = "Reboot command", description = "For type=command: the program and its arguments.")
        String[] command() default {"nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--", "systemctl", "reboot"};

        /** @return timeout */
        @AttributeDefinition(name = "Command timeout (seconds)", description = "For type=command: seconds to wait for the command to exit.", min = "1")
        int commandTimeoutSeconds() default 60;
    }

    private BundleContext context;
    private ServiceRegistration<RebootExecutor> registration;
    private Config current;

    /** Where refused values are listed (the management bundle's Configuration MBean), when present. */
    private final RefusalReporter refusals = new RefusalReporter();

    /**
     * @param r the service that lists refused values (DS: optional and dynamic, so its arrival or departure never
     *        re-registers the executor)
     */
    @org.osgi.service.component.annotations.Reference(
            cardinality = org.osgi.service.component.annotations.ReferenceCardinality.OPTIONAL,
            policy = org.osgi.service.component.annotations.ReferencePolicy.DYNAMIC)
    void bindRefusals(ConfigurationRefusals r) {
        refusals.bind(r);
    }

    /** @param r the service that goes away */
    void unbindRefusals(ConfigurationRefusals r) {
        refusals.unbind(r);
    }

    @Activate
    void activate(BundleContext ctx, Config c) {
        context = ctx;
        apply(c);
    }

    @Modified
    void modified(Config c) {
        apply(c);
    }

    @Deactivate
    void deactivate() {
        unregister();
    }

    /**
     * @param c the configuration
     * @param refused receives every refused value, in the order of the keys checked
     * @return the executor of {@code type}: {@code null} for {@code none} or when a value is refused
     */
    static RebootExecutor executor(Config c, List<ConfigurationRefusals.Refusal> refused) {
        String type = c.type() == null ? "" : c.type().trim();
        switch (type) {
            case "none", "libc" -> {
                // nothing more to check
            }
            case "command" -> {
                if (c.command() == null || c.command().length == 0 || c.command()[0].isBlank()) {
                    refused.add(new ConfigurationRefusals.Refusal("command",
                            c.command() == null ? null : String.join(",", c.command()),
                            "is empty: type=command needs the command to run (program, then its arguments)"));
                }
                if (c.commandTimeoutSeconds() < 1) {
                    refused.add(new ConfigurationRefusals.Refusal("commandTimeoutSeconds", c.commandTimeoutSeconds(),
                            c.commandTimeoutSeconds() + " must be at least 1"));
                }
            }
            default -> refused.add(new ConfigurationRefusals.Refusal("type", c.type(),
                    "'" + c.type() + "' is not none, libc or command"));
        }
        if (!refused.isEmpty() || "none".equals(type)) {
            return null;
        }
        return "libc".equals(type) ? new LibcExecutor()
                : new CommandExecutor(List.of(c.command()), c.commandTimeoutSeconds());
    }

    /**
     * Registers the executor of {@code c}; every refused value is logged in one ERROR line and reported to the
     * {@link ConfigurationRefusals} service (an accepted configuration ends the refusal), and the previous executor
     * stays.
     */
    private void apply(Config c) {
        List<ConfigurationRefusals.Refusal> refused = new ArrayList<>();
        RebootExecutor ex = executor(c, refused);
        ConfigurationRefusals.report(refusals.service(), PID, refused, LOG);
        if (!refused.isEmpty()) {
            LOG.log(Level.ERROR, "PID " + PID + ": keeping the previous configuration");
            return;
        }
        unregister();
        current = c;
        if (ex == null) {
            LOG.log(Level.WARNING, "no reboot executor configured (PID " + PID + " type=none): this node agent never"
                    + " reboots the node (a simulated node's simulator executor aside: the rebooter names the one it"
                    + " uses); set type=libc or type=command to allow it");
            return;
        }
        registration = context.registerService(RebootExecutor.class, ex, null);
        LOG.log(Level.INFO, "reboot executor: " + ex.describe());
    }

    private void unregister() {
        if (registration != null) {
            try {
                registration.unregister();
            } catch (IllegalStateException ignored) {
                // gone
            }
            registration = null;
        }
    }

    /** libc {@code sync()} + {@code reboot(RB_AUTOBOOT)}. */
    interface CLib extends Library {
        int sync();

        int reboot(int cmd);
    }

    static final class LibcExecutor implements RebootExecutor {
        @Override
        public String describe() {
            return "libc sync() + reboot(RB_AUTOBOOT)";
        }

        @Override
        public void reboot(String reason) throws IOException {
            CLib lib;
            try {
                lib = Native.load("c", CLib.class);
            } catch (UnsatisfiedLinkError e) {
                throw new IOException("cannot load libc through JNA: " + e.getMessage(), e);
            }
            LOG.log(Level.WARNING, "rebooting the node now (reason=" + reason + "): sync(), reboot(RB_AUTOBOOT)");
            lib.sync();
            int rc = lib.reboot(RB_AUTOBOOT);
            if (rc != 0) {
                throw new IOException("reboot(RB_AUTOBOOT) returned " + rc + ", errno " + Native.getLastError()
                        + " (the container needs CAP_SYS_BOOT and the host PID namespace)");
            }
        }
    }

    static final class CommandExecutor implements RebootExecutor {
        private final List<String> command;
        private final int timeoutSeconds;

        CommandExecutor(List<String> command, int timeoutSeconds) {
            this.command = command;
            this.timeoutSeconds = timeoutSeconds;
        }

        @Override
        public String describe() {
            return "command " + String.join(" ", command);
        }

        @Override
        public void reboot(String reason) throws IOException {
            LOG.log(Level.WARNING, "rebooting the node now (reason=" + reason + "): " + command);
            Process p = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectErrorStream(true).start();
            try {
                if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IOException("reboot command " + command + " did not exit within " + timeoutSeconds + " s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while running " + command, e);
            }
            if (p.exitValue() != 0) {
                byte[] out = p.getInputStream().readNBytes(2048);
                throw new IOException("reboot command " + command + " exited with " + p.exitValue() + ": "
                        + new String(out, java.nio.charset.StandardCharsets.UTF_8).strip());
            }
        }

        @Override
        public String toString() {
            return describe() + Arrays.toString(new int[] {timeoutSeconds});
        }
    }
}
