package io.npulifecycle.probe.internal;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** The records logged under one logger name while open (java.util.logging backs System.Logger in the tests). */
final class LogLines implements AutoCloseable {

    private final Logger jul;
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            records.add(r);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    /** @param loggerName e.g. the engine's class name */
    LogLines(String loggerName) {
        jul = Logger.getLogger(loggerName);
        jul.addHandler(handler);
    }

    /** @return the messages so far, oldest first */
    List<String> messages() {
        return records.stream().map(LogRecord::getMessage).toList();
    }

    /** @return the records so far as {@code LEVEL message}, e.g. {@code SEVERE health-watch ...} */
    List<String> withLevels() {
        return records.stream().map(r -> r.getLevel() + " " + r.getMessage()).toList();
    }

    @Override
    public void close() {
        jul.removeHandler(handler);
    }
}
