package io.npulifecycle.security.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.security.tool.UsersFile.User;
import io.npulifecycle.security.tool.UsersFile.UsersFileException;

class UsersFileTest {

    static String hash;

    @TempDir
    Path dir;

    @BeforeAll
    static void hash() {
        hash = PasswordHash.create("viewer-password-1".toCharArray(), new SecureRandom()).toString();
    }

    @Test
    void readsUsersRolesAndSkipsComments() throws Exception {
        Path f = dir.resolve(UsersFile.FILE);
        Files.writeString(f, "# comment\n! also a comment\n\n alice = viewer:" + hash + "\r\nbob=operator:" + hash
                + "\n");
        Map<String, User> users = UsersFile.read(f);
        assertEquals(2, users.size());
        assertEquals(Role.VIEWER, users.get("alice").role());
        assertEquals(Role.OPERATOR, users.get("bob").role());
        assertTrue(users.get("alice").hash().verify("viewer-password-1".toCharArray()));
        assertEquals("alice=viewer:" + hash, users.get("alice").line());
    }

    private String error(String content) {
        return assertThrows(UsersFileException.class, () -> UsersFile.parse(content, "users.properties"))
                .getMessage();
    }

    @Test
    void malformedLinesAreNamedByLineNumber() {
        assertEquals("users.properties, line 2: expected <user>=<role>:pbkdf2-sha256:<iterations>:<salt>:<hash> "
                + "(the line 'npu-lifecycle hash-password' prints), found no '='", error("# c\nalice viewer\n"));
        assertTrue(error("\n\nalice=secret-password\n").startsWith("users.properties, line 3: user 'alice': expected "
                + "<role>:<password hash>"));
        assertTrue(error("alice=admin:" + hash).startsWith("users.properties, line 1: user 'alice': unknown role "
                + "'admin'"));
        assertTrue(error("alice=viewer:plain:text").contains("line 1: user 'alice': expected pbkdf2-sha256"));
        assertTrue(error("al ice=viewer:" + hash).contains("line 1: 'al ice' is not a user name"));
        assertTrue(error("=viewer:" + hash).contains("line 1: '' is not a user name"));
        assertTrue(error("a=viewer:" + hash + "\nb=viewer:" + hash.replace("210000", "10")).contains(
                "line 2: user 'b': iteration count 10 is out of range"));
        assertEquals("users.properties, line 2: user 'a' is defined twice",
                error("a=viewer:" + hash + "\na=operator:" + hash));
    }

    @Test
    void missingEmptyAndBinaryFiles() throws Exception {
        Path f = dir.resolve("nope.properties");
        assertTrue(assertThrows(UsersFileException.class, () -> UsersFile.read(f)).getMessage()
                .endsWith("nope.properties: the Jolokia users file does not exist"));
        Files.writeString(f, "# only comments\n");
        assertEquals(0, UsersFile.read(f).size());
        Files.write(f, new byte[] {'a', '=', (byte) 0xff, (byte) 0xfe});
        assertTrue(assertThrows(UsersFileException.class, () -> UsersFile.read(f)).getMessage()
                .endsWith("not UTF-8 text"));
        Files.write(f, "x".repeat((int) UsersFile.MAX_BYTES + 1).getBytes(StandardCharsets.UTF_8));
        assertTrue(assertThrows(UsersFileException.class, () -> UsersFile.read(f)).getMessage()
                .contains("larger than"));
    }

    @Test
    void loadKeepsTheValidLinesAndNamesEachOtherLineWithoutItsHash() throws Exception {
        Path f = dir.resolve(UsersFile.FILE);
        String broken = hash.substring(0, hash.length() - 8);
        Files.writeString(f, "# users\nalice=viewer:" + hash + "\nbob=operator:" + broken + "\ncarol viewer\n"
                + "dave=viewer:" + hash + "\ndave=operator:" + hash + "\nerin=operator:" + hash + "\n");
        UsersFile.Loaded loaded = UsersFile.load(f);
        assertEquals(java.util.List.of("alice", "erin"), java.util.List.copyOf(loaded.users().keySet()));
        assertEquals(3, loaded.problems().size(), loaded.problems().toString());
        assertTrue(loaded.problems().get(0).startsWith(f + ", line 3: user 'bob': hash has "), loaded.problems()
                .get(0));
        assertTrue(loaded.problems().get(1).startsWith(f + ", line 4: expected <user>=<role>:"), loaded.problems()
                .get(1));
        assertEquals(f + ", line 6: user 'dave' is defined twice (first on line 5): neither line is used",
                loaded.problems().get(2));
        for (String p : loaded.problems()) {
            assertTrue(!p.contains(broken.substring(broken.lastIndexOf(':') + 1)), "no hash in " + p);
        }
        // the whole file unusable is still an error
        assertThrows(UsersFileException.class, () -> UsersFile.load(dir.resolve("missing.properties")));
        assertTrue(UsersFile.load("# nothing\n", "x").problems().isEmpty());
    }
}
