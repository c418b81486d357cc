package io.npulifecycle.api.reboot;

import java.io.IOException;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Reboots the host (an OSGi service; the rebooter uses the one with the highest ranking). Called only by the rebooter,
 * after the policy check, the approval consumption and the re-check.
 *
 * <p>Implementations: {@code libc} ({@code sync()} then {@code reboot(RB_AUTOBOOT)} through JNA), {@code command}
 * (e.g. {@code nsenter -t 1 -m -u -i -n -p -- systemctl reboot}), the simulator's, and test fakes.
 */
@ConsumerType
public interface RebootExecutor {

    /** @return a short description for logs and the MBean, e.g. {@code libc reboot(RB_AUTOBOOT)} */
    String describe();

    /**
     * Reboots. On a real host this does not return; an implementation that returns normally has handed the reboot
     * over (a command was accepted, a simulator restarts the node later).
     *
     * @param reason {@code recovery} or {@code upgrade}, for logs
     * @throws IOException if the reboot could not be started (the message says why)
     */
    void reboot(String reason) throws IOException;
}
