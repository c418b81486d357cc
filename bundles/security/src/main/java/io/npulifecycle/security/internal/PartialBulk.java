package io.npulifecycle.security.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jolokia.json.JSONArray;
import org.jolokia.json.JSONWriter;
import org.jolokia.json.parser.JSONParser;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

/**
 * A Jolokia bulk request of which some items are answered here: refused items
 * ({@code {"status":403,"error_type":"java.lang.SecurityException","error":"<reason>","request":{...}}}) and items
 * Jolokia could not build (status 400, see {@link RequestClassifier#jolokiaProblem}) get their own Jolokia error
 * entries, the others are served by Jolokia, and the answer is one JSON array in the order of the request, as Jolokia
 * answers a bulk with failing items (HTTP 200).
 */
final class PartialBulk {

    private PartialBulk() {
    }

    /**
     * @param reason why the request was refused
     * @param request the request object as sent, echoed as Jolokia does, or {@code null}
     * @return a Jolokia error entry with status 403
     */
    static Map<String, Object> refusal(String reason, Object request) {
        return JsonError.entry(403, "java.lang.SecurityException", reason, request);
    }

    /** @return {@code value} as JSON text */
    static String json(Object value) {
        StringWriter w = new StringWriter();
        try {
            JSONWriter.serialize(value, w);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write JSON to memory", e);
        }
        return w.toString();
    }

    /**
     * @param items the bulk's elements
     * @param errors for each item, its error entry, or {@code null} when it is served
     * @return the body to hand to Jolokia: the served items only, as a JSON array
     */
    static String served(List<?> items, List<? extends Map<String, Object>> errors) {
        JSONArray out = new JSONArray();
        for (int i = 0; i < items.size(); i++) {
            if (errors.get(i) == null) {
                out.add(items.get(i));
            }
        }
        return json(out);
    }

    /**
     * Puts the error entries back in their places.
     *
     * @param items the bulk's elements
     * @param errors for each item, its error entry, or {@code null} when it is served
     * @param jolokiaAnswer Jolokia's answer to {@link #served}, or {@code null} when nothing was served
     * @return the whole answer, or {@code null} when Jolokia's answer is not an array with one entry per served item
     *         (then it is passed on as it is)
     */
    static String merge(List<?> items, List<? extends Map<String, Object>> errors, String jolokiaAnswer) {
        List<?> answers = List.of();
        if (jolokiaAnswer != null) {
            Object parsed;
            try {
                parsed = new JSONParser().parse(jolokiaAnswer);
            } catch (Exception e) {
                return null;
            }
            if (!(parsed instanceof List)) {
                return null;
            }
            answers = (List<?>) parsed;
        }
        long served = errors.stream().filter(r -> r == null).count();
        if (answers.size() != served) {
            return null;
        }
        List<Object> out = new ArrayList<>();
        int next = 0;
        for (int i = 0; i < items.size(); i++) {
            out.add(errors.get(i) == null ? answers.get(next++) : errors.get(i));
        }
        return json(out);
    }

    /** Keeps what Jolokia writes in memory (status, headers and everything else go to the real response). */
    static final class Captured extends HttpServletResponseWrapper {
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        private PrintWriter writer;
        private final ServletOutputStream stream = new MemoryOutputStream(body);

        Captured(HttpServletResponse response) {
            super(response);
        }

        @Override
        public ServletOutputStream getOutputStream() {
            return stream;
        }

        @Override
        public PrintWriter getWriter() {
            if (writer == null) {
                writer = new PrintWriter(new OutputStreamWriter(body, StandardCharsets.UTF_8));
            }
            return writer;
        }

        @Override
        public void setContentLength(int len) {
            // the merged body has another length
        }

        @Override
        public void setContentLengthLong(long len) {
            // the merged body has another length
        }

        @Override
        public void flushBuffer() {
            if (writer != null) {
                writer.flush();
            }
        }

        /** @return what was written, as UTF-8 text (Jolokia writes UTF-8) */
        String text() {
            if (writer != null) {
                writer.flush();
            }
            return body.toString(StandardCharsets.UTF_8);
        }
    }
}
