package io.npulifecycle.security.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

class HashPasswordTest {

    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();

    int run(String stdin, String... args) {
        return HashPassword.run(List.of(args), null, new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
                new PrintStream(out, true), new PrintStream(err, true));
    }

    @Test
    void printsAUsersFileLineFromStdin() throws Exception {
        assertEquals(0, run("a-long-enough-password\r\nignored\n", "--role", "operator", "carol"));
        String line = out.toString(StandardCharsets.UTF_8).trim();
        assertTrue(line.startsWith("carol=operator:pbkdf2-sha256:210000:"), line);
        UsersFile.User u = UsersFile.parseLine(line, "out");
        assertTrue(u.hash().verify("a-long-enough-password".toCharArray()));
        assertTrue(!line.contains("a-long-enough-password"));
    }

    @Test
    void defaultRoleIsViewer() throws Exception {
        assertEquals(0, run("a-long-enough-password\n", "dave"));
        assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("dave=viewer:"));
    }

    @Test
    void refusesShortPasswordsBadRolesAndNames() {
        assertEquals(2, run("short-11chr\n", "erin"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("at least 12 characters"));
        assertEquals(2, run("a-long-enough-password\n", "--role", "admin", "erin"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown role 'admin'"));
        assertEquals(2, run("a-long-enough-password\n", "bad name"));
        assertEquals(2, run("a-long-enough-password\n"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("no user name given"));
        assertEquals(2, run("", "frank"));
        assertEquals("", out.toString(StandardCharsets.UTF_8));
    }
}
