package io.npulifecycle.probe.internal;

import com.sun.jna.Library;
import com.sun.jna.ptr.IntByReference;

/**
 * The subset of Huawei's DCMI C API ({@code libdcmi.so}) used by the health-watch, bound through JNA. Every function
 * returns 0 on success or a negative DCMI code (base -8000, see {@link DcmiCodes}).
 *
 * <p>No driver-version call is bound: the exact signature of a DCMI driver-version function could not be confirmed
 * from a source available to this project, so the DCMI probe reports the driver version as {@code null}.
 */
public interface DcmiLibrary extends Library {

    /** {@code int dcmi_init(void)}. @return 0 or a DCMI code */
    int dcmi_init();

    /**
     * {@code int dcmi_get_card_num_list(int *card_num, int *card_list, int list_len)}.
     *
     * @param cardNum out: number of cards (NPU ids)
     * @param cardList out: the card ids
     * @param listLen capacity of {@code cardList}
     * @return 0 or a DCMI code
     */
    int dcmi_get_card_num_list(IntByReference cardNum, int[] cardList, int listLen);

    /**
     * {@code int dcmi_get_device_num_in_card(int card_id, int *device_num)}.
     *
     * @param cardId the card (NPU id)
     * @param deviceNum out: number of devices (chips) on it
     * @return 0 or a DCMI code
     */
    int dcmi_get_device_num_in_card(int cardId, IntByReference deviceNum);

    /**
     * {@code int dcmi_get_device_health(int card_id, int device_id, unsigned int *health)}: health 0 normal, 1 minor,
     * 2 major, 3 critical alarm, 0xFFFFFFFF absent (fixtures README).
     *
     * @param cardId card (NPU id)
     * @param deviceId device (chip id)
     * @param health out: the health code (unsigned, read as int)
     * @return 0 or a DCMI code
     */
    int dcmi_get_device_health(int cardId, int deviceId, IntByReference health);
}
