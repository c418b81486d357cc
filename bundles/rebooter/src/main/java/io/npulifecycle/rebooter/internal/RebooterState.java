package io.npulifecycle.rebooter.internal;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What the rebooter persists across reboots ({@code <stateDir>/rebooter.state}), mutable, guarded by the engine.
 *
 * <p>{@link #intent}: an approval consumption was started for this boot (written before the API call, so a crash in
 * the middle is resolved by asking the API server). {@link #consumed}: the approval was consumed for this boot (written
 * right after the API call succeeded): a restart in the same boot reboots without a second approval.
 * {@link #reboot}: the reboot call was made leaving this boot; a later boot with another id completes it.
 */
final class RebooterState {

    /** One step record: boot id, reason, time, how it was authorised. */
    record Step(String bootId, String reason, Instant at, String via) {
    }

    /** One history entry. {@code outcome}: {@code called}, {@code completed}, {@code failed}, {@code dry-run}. */
    record Entry(Instant at, String reason, String fromBootId, String via, String outcome, String detail) {
        boolean countsForLoopProtection() {
            return "recovery".equals(reason) && ("called".equals(outcome) || "completed".equals(outcome));
        }

        @Override
        public String toString() {
            return at + " reason=" + reason + " from boot " + fromBootId + " via " + via + ": " + outcome
                    + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")");
        }
    }

    /** Most history entries kept. */
    static final int MAX_HISTORY = 100;

    Step intent;
    Step consumed;
    Step reboot;
    final List<Entry> history = new ArrayList<>();

    void add(Entry e) {
        history.add(e);
        while (history.size() > MAX_HISTORY) {
            history.remove(0);
        }
    }

    /**
     * Settles the last call made leaving {@code fromBootId}: its history entry {@code called} gets the outcome
     * {@code completed} or {@code failed}. Nothing changes when there is no such entry (trimmed from the history).
     *
     * @param fromBootId the boot id the reboot was called from
     * @param outcome the new outcome
     * @param detail why, e.g. {@code now boot <id>}
     */
    void settleCall(String fromBootId, String outcome, String detail) {
        for (int i = history.size() - 1; i >= 0; i--) {
            Entry e = history.get(i);
            if (e.fromBootId().equals(fromBootId) && "called".equals(e.outcome())) {
                history.set(i, new Entry(e.at(), e.reason(), e.fromBootId(), e.via(), outcome, detail));
                return;
            }
        }
    }

    /**
     * @param since the start of the loop-protection window
     * @return the recovery reboots called or completed after {@code since}
     */
    int recoveryRebootsSince(Instant since) {
        return (int) history.stream().filter(Entry::countsForLoopProtection).filter(e -> e.at().isAfter(since)).count();
    }

    /** @return the last history entry that is not a dry run, or {@code null} */
    Entry lastReboot() {
        for (int i = history.size() - 1; i >= 0; i--) {
            if (!"dry-run".equals(history.get(i).outcome())) {
                return history.get(i);
            }
        }
        return null;
    }

    List<Entry> history() {
        return Collections.unmodifiableList(history);
    }
}
