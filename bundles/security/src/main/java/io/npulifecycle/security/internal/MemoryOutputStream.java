package io.npulifecycle.security.internal;

import java.io.ByteArrayOutputStream;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;

/**
 * A servlet output stream into memory, for response wrappers that hold what Jolokia writes until they have looked at
 * it ({@link JolokiaJsonErrors}, {@link PartialBulk}). Blocking writes only: Jolokia's servlet never goes asynchronous.
 */
final class MemoryOutputStream extends ServletOutputStream {

    private final ByteArrayOutputStream buffer;

    /** @param buffer where the bytes go */
    MemoryOutputStream(ByteArrayOutputStream buffer) {
        this.buffer = buffer;
    }

    @Override
    public void write(int b) {
        buffer.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
        buffer.write(b, off, len);
    }

    @Override
    public boolean isReady() {
        return true;
    }

    /** @throws IllegalStateException always: not asynchronous */
    @Override
    public void setWriteListener(WriteListener listener) {
        throw new IllegalStateException("not asynchronous");
    }
}
