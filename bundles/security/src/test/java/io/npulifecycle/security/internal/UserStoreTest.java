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
    void aMalformedOrMissingFileRefusesEveryoneUntilFixed() throws Exception {
        Path f = dir.resolve("users.properties");
        Files.writeString(f, "alice=viewer:" + viewerHash + "\nbob=operator:clear-text\n");
        UserStore s = new UserStore(f, "op=operator:" + operatorHash);
        assertNotNull(s.problem());
        assertTrue(s.problem().contains("users.properties, line 2: user 'bob'"), s.problem());
        assertNull(s.authenticate("op", "operator-password-1".toCharArray()).caller, "fail closed, operator too");
        assertNull(s.authenticate("alice", "viewer-password-1".toCharArray()).caller);

        Files.writeString(f, "alice=viewer:" + viewerHash + "\n");
        Files.setLastModifiedTime(f, FileTime.fromMillis(Files.getLastModifiedTime(f).toMillis() + 2000));
        assertNotNull(s.authenticate("op", "operator-password-1".toCharArray()).caller, "reloaded after the fix");
        assertNull(s.problem());

        Files.delete(f);
        assertNull(s.authenticate("op", "operator-password-1".toCharArray()).caller, "missing file: fail closed");
        assertTrue(s.problem().contains("does not exist"), s.problem());
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
