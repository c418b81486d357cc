package io.npulifecycle.security.internal;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.npulifecycle.security.tool.Role;
import io.npulifecycle.security.tool.UsersFile;
import io.npulifecycle.security.tool.UsersFile.User;
import io.npulifecycle.security.tool.UsersFile.UsersFileException;

/**
 * The Jolokia users: the users file ({@code etc/jolokia-users.properties}) plus the runtime's operator user (from
 * {@code NPU_LIFECYCLE_JOLOKIA_USER}/{@code _PASSWORD} or {@code secrets/jolokia-credentials}, passed by the launcher
 * as a hash).
 *
 * <p>A malformed line of the users file (or a user defined on two lines) is skipped and logged (WARNING, naming the
 * file, the line and what was expected, never the hash), and audited: the user it was meant for cannot log in, every
 * other user can. Fail closed for everyone while the file as a whole is missing, unreadable, not UTF-8 or too large,
 * defines the runtime's own operator user again, or the operator entry is malformed: {@link #authenticate} refuses
 * everyone, and the problem is logged once (ERROR) each time it changes. The file is re-read when its modification
 * time or size changes (checked on each login), so users can be added without a restart.
 *
 * <p>A PBKDF2 verification costs about 0.1 to 0.3 s of CPU. A successful one is remembered as an HMAC (random
 * per-process key) of user, stored hash and password, so later requests with the same credentials cost one HMAC; a
 * failed one is never remembered. At most {@value #MAX_CONCURRENT_HASHES} verifications run at once, so a flood of
 * wrong passwords cannot take every core.
 */
final class UserStore {

    /** Concurrent PBKDF2 verifications. */
    static final int MAX_CONCURRENT_HASHES = 2;

    private static final Logger LOG = System.getLogger(UserStore.class.getName());

    /** Result of a login. */
    static final class Result {
        final Caller caller;
        final String failure;

        private Result(Caller caller, String failure) {
            this.caller = caller;
            this.failure = failure;
        }
    }

    private final Path file;
    private final User operator;
    private final String operatorProblem;
    private final byte[] cacheKey = new byte[32];
    private final Map<String, byte[]> verified = new ConcurrentHashMap<>();
    private final Semaphore hashing = new Semaphore(MAX_CONCURRENT_HASHES);

    private volatile Map<String, User> users = Map.of();
    private volatile String problem = "not loaded yet";
    private volatile List<String> lineProblems = List.of();
    private Object stamp;

    /**
     * @param file the users file, or {@code null} when none is configured (then everyone is refused)
     * @param operatorLine the launcher's operator entry ({@code <user>=operator:<hash>}), or {@code null}
     */
    UserStore(Path file, String operatorLine) {
        this.file = file;
        new SecureRandom().nextBytes(cacheKey);
        User op = null;
        String opProblem = null;
        if (operatorLine != null && !operatorLine.isBlank()) {
            try {
                op = UsersFile.parseLine(operatorLine.strip(), "framework property " + JolokiaAuthenticator.OPERATOR_PROPERTY);
                if (op.role() != Role.OPERATOR) {
                    opProblem = "framework property " + JolokiaAuthenticator.OPERATOR_PROPERTY
                            + ": the runtime's user must have the role operator";
                    op = null;
                }
            } catch (UsersFileException e) {
                opProblem = e.getMessage();
            }
        }
        this.operator = op;
        this.operatorProblem = opProblem;
        refresh();
    }

    /** Re-reads the users file if it changed; logs a new problem once. */
    synchronized void refresh() {
        if (file == null) {
            setProblem("no Jolokia users file configured (framework property " + JolokiaAuthenticator.USERS_PROPERTY
                    + ")");
            return;
        }
        Object now;
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            now = a.lastModifiedTime() + "/" + a.size() + "/" + a.fileKey();
        } catch (IOException e) {
            now = "missing";
        }
        if (Objects.equals(now, stamp)) {
            return;
        }
        stamp = now;
        try {
            UsersFile.Loaded loaded = UsersFile.load(file);
            Map<String, User> read = loaded.users();
            Map<String, User> all = new LinkedHashMap<>(read);
            if (operator != null) {
                if (all.containsKey(operator.name())) {
                    throw new UsersFileException(file + ": user '" + operator.name() + "' is the runtime's own "
                            + "operator user (NPU_LIFECYCLE_JOLOKIA_USER or secrets/jolokia-credentials); give it "
                            + "another name");
                }
                all.put(operator.name(), operator);
            }
            if (operatorProblem != null) {
                setProblem(operatorProblem);
                return;
            }
            users = Map.copyOf(all);
            verified.clear();
            if (problem != null || !loaded.problems().equals(lineProblems)) {
                LOG.log(Level.INFO, "Jolokia users loaded from {0}: {1} user(s) besides the runtime''s operator",
                        file, read.size());
            }
            problem = null;
            reportLines(loaded.problems());
        } catch (UsersFileException e) {
            setProblem(e.getMessage());
        }
    }

    /** Logs and audits each line not used, once per change of the set of such lines. */
    private void reportLines(List<String> problems) {
        if (problems.equals(lineProblems)) {
            return;
        }
        lineProblems = problems;
        for (String p : problems) {
            String msg = p + ": this line is ignored (that user cannot log in until it is fixed; the other users "
                    + "can; 'npu-lifecycle hash-password [--role viewer|operator] USER' prints a valid line)";
            LOG.log(Level.WARNING, msg);
            Audit.problem(msg);
        }
    }

    /** @return the users file's lines not used (file, line, what was expected), empty when every line is valid */
    List<String> lineProblems() {
        return lineProblems;
    }

    private void setProblem(String p) {
        lineProblems = List.of();
        users = Map.of();
        verified.clear();
        if (!p.equals(problem)) {
            problem = p;
            String msg = p + ": every Jolokia request is refused (401) until this is fixed";
            LOG.log(Level.ERROR, msg);
            Audit.problem(msg);
        }
    }

    /** @return why everyone is refused, or {@code null} when the users are loaded */
    String problem() {
        return problem;
    }

    /**
     * @param user the user name given
     * @param password the password given (cleared by the caller)
     * @return the caller, or the reason of the refusal
     */
    Result authenticate(String user, char[] password) {
        refresh();
        Map<String, User> u = users;
        if (problem != null) {
            return new Result(null, "users unavailable");
        }
        User entry = u.get(user);
        if (entry == null) {
            return new Result(null, "unknown user");
        }
        byte[] fingerprint = fingerprint(entry, password);
        byte[] known = verified.get(entry.name());
        if (known != null && MessageDigest.isEqual(known, fingerprint)) {
            return new Result(new Caller(entry.name(), entry.role()), null);
        }
        try {
            if (!hashing.tryAcquire(10, TimeUnit.SECONDS)) {
                return new Result(null, "too many logins at once");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(null, "interrupted");
        }
        try {
            if (!entry.hash().verify(password)) {
                return new Result(null, "wrong password");
            }
        } finally {
            hashing.release();
        }
        verified.put(entry.name(), fingerprint);
        return new Result(new Caller(entry.name(), entry.role()), null);
    }

    private byte[] fingerprint(User entry, char[] password) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(cacheKey, "HmacSHA256"));
            mac.update((entry.name() + "\0" + entry.hash() + "\0").getBytes(StandardCharsets.UTF_8));
            ByteBuffer bb = StandardCharsets.UTF_8.encode(CharBuffer.wrap(password));
            byte[] pw = new byte[bb.remaining()];
            bb.get(pw);
            byte[] out = mac.doFinal(pw);
            Arrays.fill(pw, (byte) 0);
            return out;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }
}
