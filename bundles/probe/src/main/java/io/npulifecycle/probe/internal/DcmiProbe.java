package io.npulifecycle.probe.internal;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import com.sun.jna.Native;
import com.sun.jna.ptr.IntByReference;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.ChipResult;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;

/**
 * Probes chips through DCMI ({@code libdcmi.so}, JNA): {@code dcmi_init} (once, retried until it succeeds),
 * {@code dcmi_get_card_num_list}, {@code dcmi_get_device_num_in_card} per card, {@code dcmi_get_device_health} per
 * device. Card id = NPU id, device id = chip id. Return codes are classified by {@link DcmiCodes}; health codes 0 OK,
 * 1 Warning, 2 Alarm (major), 3 Critical, 0xFFFFFFFF absent (a strike), anything else a probe error.
 *
 * <p>A library that cannot be loaded is a probe-environment error, never a chip failure. The calls run on a helper
 * thread bounded by the timeout: a native call cannot be interrupted, so while a timed-out call is still stuck every
 * later probe reports the same time-out at once instead of piling up threads.
 */
public final class DcmiProbe implements ChipProbe {

    private static final System.Logger LOG = System.getLogger(DcmiProbe.class.getName());
    private static final int MAX_CARDS = 64;

    private final Supplier<DcmiLibrary> loader;
    private final String libraryPath;
    private final ProbeOptions options;
    private final ExecutorService caller = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "npu-dcmi-call");
        t.setDaemon(true);
        return t;
    });
    private DcmiLibrary lib;
    private boolean initialised;
    private Future<ProbeResult> stuck;

    /**
     * @param libraryPath path of {@code libdcmi.so}
     * @param options switches
     */
    public DcmiProbe(String libraryPath, ProbeOptions options) {
        this(libraryPath, () -> Native.load(libraryPath, DcmiLibrary.class), options);
    }

    /**
     * @param libraryPath path, for messages
     * @param loader loads the library; may throw {@link UnsatisfiedLinkError} / {@link RuntimeException}
     * @param options switches
     */
    public DcmiProbe(String libraryPath, Supplier<DcmiLibrary> loader, ProbeOptions options) {
        this.libraryPath = libraryPath;
        this.loader = loader;
        this.options = options;
    }

    @Override
    public String method() {
        return "dcmi";
    }

    /** Stops the helper thread. */
    public void close() {
        caller.shutdownNow();
    }

    @Override
    public synchronized ProbeResult probe(Duration timeout) {
        if (stuck != null && !stuck.isDone()) {
            return timedOut("a previous DCMI call is still blocked");
        }
        stuck = null;
        Future<ProbeResult> f;
        try {
            f = caller.submit(this::probeNow);
        } catch (RuntimeException e) {
            return ProbeResult.whole(Classification.PROBE_ERROR, "DCMI probe is closed", null);
        }
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            stuck = f;
            return timedOut("DCMI did not answer within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ProbeResult.whole(Classification.PROBE_ERROR, "interrupted while waiting for DCMI", null);
        } catch (ExecutionException e) {
            return ProbeResult.whole(Classification.PROBE_ERROR, "DCMI call failed: " + e.getCause(), null);
        }
    }

    private ProbeResult timedOut(String msg) {
        LOG.log(Level.WARNING, msg);
        return ProbeResult.whole(options.timeoutIsFailure() ? Classification.FAILED : Classification.PROBE_ERROR, msg, null);
    }

    /** One probe, on the helper thread. */
    ProbeResult probeNow() {
        if (lib == null) {
            try {
                lib = loader.get();
            } catch (UnsatisfiedLinkError | RuntimeException e) {
                return ProbeResult.whole(Classification.PROBE_ERROR,
                        "cannot load DCMI library " + libraryPath + ": " + e.getMessage(), null);
            }
        }
        if (!initialised) {
            int rc = lib.dcmi_init();
            if (rc != 0) {
                return code("dcmi_init", rc);
            }
            initialised = true;
        }
        IntByReference cardNum = new IntByReference();
        int[] cards = new int[MAX_CARDS];
        int rc = lib.dcmi_get_card_num_list(cardNum, cards, MAX_CARDS);
        if (rc != 0) {
            return code("dcmi_get_card_num_list", rc);
        }
        int n = cardNum.getValue();
        if (n < 0 || n > MAX_CARDS) {
            return ProbeResult.whole(Classification.PROBE_ERROR, "dcmi_get_card_num_list returned " + n + " cards", null);
        }
        List<ChipResult> chips = new ArrayList<>();
        StringBuilder raw = new StringBuilder("cards=" + n);
        for (int i = 0; i < n; i++) {
            int card = cards[i];
            if (card < 0) {
                return ProbeResult.whole(Classification.PROBE_ERROR, "DCMI returned a negative card id " + card, null);
            }
            IntByReference devNum = new IntByReference();
            rc = lib.dcmi_get_device_num_in_card(card, devNum);
            raw.append("; card ").append(card);
            if (rc != 0) {
                raw.append(" device_num rc=").append(rc);
                if (DcmiCodes.classify(rc, options) == Classification.PROBE_ERROR) {
                    return ProbeResult.whole(Classification.PROBE_ERROR,
                            "dcmi_get_device_num_in_card(" + card + "): " + DcmiCodes.describe(rc), raw.toString());
                }
                // the driver refuses to enumerate this card: its chips are absent from the result, so every
                // expected chip of this NPU is a strike (Assessment), and the other cards still count on their own
                LOG.log(Level.WARNING, "DCMI refuses to enumerate NPU " + card + ": " + DcmiCodes.describe(rc));
                continue;
            }
            int devices = devNum.getValue();
            raw.append(" devices=").append(devices);
            if (devices < 0 || devices > 64) {
                return ProbeResult.whole(Classification.PROBE_ERROR,
                        "dcmi_get_device_num_in_card(" + card + ") returned " + devices, raw.toString());
            }
            for (int d = 0; d < devices; d++) {
                IntByReference health = new IntByReference();
                rc = lib.dcmi_get_device_health(card, d, health);
                ChipId id = new ChipId(card, d);
                if (rc != 0) {
                    chips.add(new ChipResult(id, null, DcmiCodes.classify(rc, options),
                            "dcmi_get_device_health: " + DcmiCodes.describe(rc)));
                    raw.append(" chip ").append(d).append(" rc=").append(rc);
                    continue;
                }
                int h = health.getValue();
                raw.append(" chip ").append(d).append(" health=").append(Integer.toUnsignedString(h));
                chips.add(health(id, h));
            }
        }
        return new ProbeResult(chips, null, null, null, raw.toString());
    }

    private ChipResult health(ChipId id, int h) {
        switch (h) {
            case 0:
                return new ChipResult(id, "OK", Classification.HEALTHY, null);
            case 1:
                return new ChipResult(id, "Warning", Classification.DEGRADED, "DCMI health 1 (minor alarm)");
            case 2:
                return new ChipResult(id, "Alarm", options.alarmIsFailure() ? Classification.FAILED : Classification.DEGRADED,
                        "DCMI health 2 (major alarm)");
            case 3:
                return new ChipResult(id, "Critical", options.alarmIsFailure() ? Classification.FAILED : Classification.DEGRADED,
                        "DCMI health 3 (critical alarm)");
            case 0xFFFFFFFF:
                return new ChipResult(id, null, Classification.FAILED, "DCMI health 0xFFFFFFFF (chip absent)");
            default:
                return new ChipResult(id, null, Classification.PROBE_ERROR,
                        "unknown DCMI health code " + Integer.toUnsignedString(h));
        }
    }

    private ProbeResult code(String call, int rc) {
        return ProbeResult.whole(DcmiCodes.classify(rc, options), call + ": " + DcmiCodes.describe(rc), call + " rc=" + rc);
    }
}
