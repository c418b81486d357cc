package io.npulifecycle.probe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import com.sun.jna.ptr.IntByReference;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;

/** DCMI probe mapping with a fake libdcmi (the real one is not on this machine). */
@Timeout(30)
class DcmiProbeTest {

    /** A fake DCMI: cards -> health per device; codes to return. */
    static class FakeDcmi implements DcmiLibrary {
        int initRc;
        int cardListRc;
        Map<Integer, int[]> cards = Map.of(0, new int[] {0}, 1, new int[] {0});
        Map<Integer, Integer> deviceNumRc = Map.of();
        Map<String, Integer> healthRc = Map.of();
        CountDownLatch block;

        @Override
        public int dcmi_init() {
            return initRc;
        }

        @Override
        public int dcmi_get_card_num_list(IntByReference cardNum, int[] cardList, int listLen) {
            if (block != null) {
                try {
                    block.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (cardListRc != 0) {
                return cardListRc;
            }
            int i = 0;
            for (int c : cards.keySet().stream().sorted().toList()) {
                cardList[i++] = c;
            }
            cardNum.setValue(i);
            return 0;
        }

        @Override
        public int dcmi_get_device_num_in_card(int cardId, IntByReference deviceNum) {
            Integer rc = deviceNumRc.get(cardId);
            if (rc != null) {
                return rc;
            }
            deviceNum.setValue(cards.get(cardId).length);
            return 0;
        }

        @Override
        public int dcmi_get_device_health(int cardId, int deviceId, IntByReference health) {
            Integer rc = healthRc.get(cardId + ":" + deviceId);
            if (rc != null) {
                return rc;
            }
            health.setValue(cards.get(cardId)[deviceId]);
            return 0;
        }
    }

    private static DcmiProbe probe(FakeDcmi lib) {
        return new DcmiProbe("/fake/libdcmi.so", () -> lib, ProbeOptions.DEFAULTS);
    }

    @Test
    void healthCodesMapToClassifications() {
        FakeDcmi lib = new FakeDcmi();
        lib.cards = Map.of(0, new int[] {0, 1}, 4, new int[] {2, 3}, 5, new int[] {0xFFFFFFFF, 7});
        ProbeResult r = probe(lib).probe(Duration.ofSeconds(5));
        assertNull(r.outcome(), r.error());
        assertNull(r.driverVersion(), "no DCMI driver-version call is bound");
        Map<ChipId, ?> m = Assessment.of(r, Set.of()).chips();
        assertEquals(6, m.size());
        Assessment a = Assessment.of(r, Set.of());
        assertEquals(Classification.HEALTHY, a.chips().get(new ChipId(0, 0)).classification());
        assertEquals(Classification.DEGRADED, a.chips().get(new ChipId(0, 1)).classification());
        assertEquals(Classification.DEGRADED, a.chips().get(new ChipId(4, 0)).classification());
        assertEquals(Classification.DEGRADED, a.chips().get(new ChipId(4, 1)).classification());
        assertEquals(Classification.FAILED, a.chips().get(new ChipId(5, 0)).classification(), "0xFFFFFFFF absent");
        assertEquals(Classification.PROBE_ERROR, a.chips().get(new ChipId(5, 1)).classification(), "unknown code 7");
    }

    @Test
    void returnCodes() {
        FakeDcmi lib = new FakeDcmi();
        lib.initRc = -8020;
        DcmiProbe p = probe(lib);
        assertEquals(Classification.PROBE_ERROR, p.probe(Duration.ofSeconds(5)).outcome());
        lib.initRc = 0;
        lib.cardListRc = -8005;
        ProbeResult r = p.probe(Duration.ofSeconds(5));
        assertEquals(Classification.FAILED, r.outcome());
        assertTrue(r.error().contains("-8005"));
        for (int code : new int[] {-8013, -9005, -8012, -8017}) {
            lib.cardListRc = code;
            assertEquals(Classification.PROBE_ERROR, p.probe(Duration.ofSeconds(5)).outcome(), "code " + code);
        }
        lib.cardListRc = 0;
        lib.deviceNumRc = Map.of(1, -8008); // the driver refuses to enumerate NPU 1 only
        Assessment a = Assessment.of(p.probe(Duration.ofSeconds(5)), ChipId.parseList("0:0,1:0"));
        assertEquals(Classification.HEALTHY, a.chips().get(new ChipId(0, 0)).classification());
        assertEquals(Classification.FAILED, a.chips().get(new ChipId(1, 0)).classification());
        lib.deviceNumRc = Map.of();
        lib.healthRc = Map.of("1:0", -8020);
        a = Assessment.of(p.probe(Duration.ofSeconds(5)), ChipId.parseList("0:0,1:0"));
        assertEquals(Classification.PROBE_ERROR, a.chips().get(new ChipId(1, 0)).classification());
    }

    @Test
    void libraryThatCannotBeLoadedIsAProbeEnvironmentError() {
        DcmiProbe real = new DcmiProbe("/nonexistent/libdcmi.so", ProbeOptions.DEFAULTS);
        ProbeResult r = real.probe(Duration.ofSeconds(10));
        assertEquals(Classification.PROBE_ERROR, r.outcome());
        assertTrue(r.error().contains("cannot load DCMI library /nonexistent/libdcmi.so"), r.error());
        real.close();
    }

    @Test
    void blockedCallTimesOutAndDoesNotPileUp() {
        FakeDcmi lib = new FakeDcmi();
        lib.block = new CountDownLatch(1);
        DcmiProbe p = probe(lib);
        ProbeResult r = p.probe(Duration.ofMillis(200));
        assertEquals(Classification.FAILED, r.outcome(), "timeoutIsFailure default");
        ProbeResult again = p.probe(Duration.ofSeconds(5));
        assertTrue(again.error().contains("still blocked"), again.error());
        lib.block.countDown();
        p.close();
    }
}
