package io.npulifecycle.security.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.SecureRandom;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.security.tool.PasswordHash;
import io.npulifecycle.security.tool.Role;

class UserStoreTest {

    static String viewerHash;
    static String operatorHash;

    @TempDir
    Path dir;

    @BeforeAll
    static void hashes() {
        viewerHash = PasswordHash.create("viewer-password-1".toCharArray(), new SecureRandom()).toString();
        operatorHash = PasswordHash.create("operator-password-1".toCharArray(), new SecureRandom()).toString();
    }

    @Test
    void fileUsersAndTheRuntimeOperator() throws Exception {
        Path f = dir.resolve("users.properties");
        Files.writeString(f, "alice=viewer:" + viewerHash + "\n");
        UserStore s = new UserStore(f, "op=operator:" + operatorHash);
        assertNull(s.problem());
        UserStore.Result a = s.authenticate("alice", "viewer-password-1".toCharArray());
        assertEquals(Role.VIEWER, a.caller.role());
        assertEquals(Role.OPERATOR, s.authenticate("op", "operator-password-1".toCharArray()).caller.role());
        // second time from the cache, same answer
        assertEquals(Role.OPERATOR, s.authenticate("op", "operator-password-1".toCharArray()).caller.role());
        assertEquals("wrong password", s.authenticate("op", "operator-password-2".toCharArray()).failure);
        assertEquals("unknown user", s.authenticate("mallory", "viewer-password-1".toCharArray()).failure);
    }

    @Test
    void aMalformedLineLocksOutOnlyItsUserAndIsLoggedWithFileAndLineButNotTheHash() throws Exception {
        java.util.List<String> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(UserStore.class.getName());
        java.util.logging.Handler h = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                logged.add(r.getLevel() + " " + r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(h);
        try {
            Path f = dir.resolve("users.properties");
            String cut = viewerHash.substring(0, viewerHash.length() - 8);
            Files.writeString(f, "alice=viewer:" + viewerHash + "\nbob=operator:" + cut + "\n");
            UserStore s = new UserStore(f, "op=operator:" + operatorHash);
            assertNull(s.problem(), "the file as a whole is usable");
            assertNotNull(s.authenticate("op", "operator-password-1".toCharArray()).caller, "the operator gets in");
            assertEquals(Role.VIEWER, s.authenticate("alice", "viewer-password-1".toCharArray()).caller.role());
            assertEquals("unknown user", s.authenticate("bob", "viewer-password-1".toCharArray()).failure);
            assertEquals(1, s.lineProblems().size(), s.lineProblems().toString());
            assertTrue(s.lineProblems().get(0).startsWith(f + ", line 2: user 'bob': hash has "),
                    s.lineProblems().get(0));
            assertTrue(logged.stream().anyMatch(l -> l.startsWith("WARNING " + f + ", line 2: user 'bob'")
                    && l.contains("this line is ignored")), logged.toString());
            String hashPart = cut.substring(cut.lastIndexOf(':') + 1);
            assertTrue(logged.stream().noneMatch(l -> l.contains(hashPart)), "no hash in the log: " + logged);
            int reports = logged.size();
            s.authenticate("alice", "viewer-password-1".toCharArray());
            assertEquals(reports, logged.size(), "reported once, not on every login");

            Files.writeString(f, "alice=viewer:" + viewerHash + "\nbob=operator:" + operatorHash + "\n");
            Files.setLastModifiedTime(f, FileTime.fromMillis(Files.getLastModifiedTime(f).toMillis() + 2000));
            assertEquals(Role.OPERATOR, s.authenticate("bob", "operator-password-1".toCharArray()).caller.role(),
                    "reloaded after the fix");
            assertTrue(s.lineProblems().isEmpty());
        } finally {
            log.removeHandler(h);
        }
    }

    @Test
    void aMissingFileRefusesEveryoneUntilItIsBack() throws Exception {
        Path f = dir.resolve("users.properties");
        Files.writeString(f, "alice=viewer:" + viewerHash + "\n");
        UserStore s = new UserStore(f, "op=operator:" + operatorHash);
        assertNotNull(s.authenticate("op", "operator-password-1".toCharArray()).caller);
        Files.delete(f);
        assertNull(s.authenticate("op", "operator-password-1".toCharArray()).caller, "missing file: fail closed");
        assertTrue(s.problem().contains("does not exist"), s.problem());
        Files.writeString(f, "alice=viewer:" + viewerHash + "\n");
        assertNotNull(s.authenticate("op", "operator-password-1".toCharArray()).caller, "back: loaded again");
    }

    @Test
    void aBadOperatorEntryOrAClashRefusesEveryone() throws Exception {
        Path f = dir.resolve("users.properties");
        Files.writeString(f, "alice=viewer:" + viewerHash + "\n");
        UserStore bad = new UserStore(f, "op=viewer:" + operatorHash);
        assertTrue(bad.problem().contains("must have the role operator"), bad.problem());
        assertNull(bad.authenticate("alice", "viewer-password-1".toCharArray()).caller);

        Files.writeString(f, "op=viewer:" + viewerHash + "\n");
        UserStore clash = new UserStore(f, "op=operator:" + operatorHash);
        assertTrue(clash.problem().contains("user 'op' is the runtime's own operator user"), clash.problem());
        assertNull(new UserStore(null, "op=operator:" + operatorHash).authenticate("op",
                "operator-password-1".toCharArray()).caller);
    }
}
