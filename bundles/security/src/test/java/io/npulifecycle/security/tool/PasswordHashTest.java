package io.npulifecycle.security.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.Base64;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PasswordHashTest {

    static PasswordHash hash;

    @BeforeAll
    static void create() {
        hash = PasswordHash.create("correct horse battery".toCharArray(), new SecureRandom());
    }

    @Test
    void formatIsAlgorithmIterationsSaltHash() {
        String[] f = hash.toString().split(":");
        assertEquals(4, f.length);
        assertEquals("pbkdf2-sha256", f[0]);
        assertEquals("210000", f[1]);
        assertEquals(16, Base64.getDecoder().decode(f[2]).length);
        assertEquals(32, Base64.getDecoder().decode(f[3]).length);
        assertFalse(hash.toString().contains("correct"));
    }

    @Test
    void verifiesTheRightPasswordOnlyAndRoundTrips() {
        PasswordHash parsed = PasswordHash.parse(hash.toString());
        assertTrue(parsed.verify("correct horse battery".toCharArray()));
        assertFalse(parsed.verify("correct horse batterY".toCharArray()));
        assertFalse(parsed.verify(new char[0]));
    }

    @Test
    void saltIsRandom() {
        PasswordHash other = PasswordHash.create("correct horse battery".toCharArray(), new SecureRandom());
        assertNotEquals(hash.toString(), other.toString());
    }

    @Test
    void tamperedHashNoLongerVerifies() {
        String[] f = hash.toString().split(":");
        byte[] h = Base64.getDecoder().decode(f[3]);
        h[0] ^= 1;
        String tampered = f[0] + ":" + f[1] + ":" + f[2] + ":" + Base64.getEncoder().encodeToString(h);
        assertFalse(PasswordHash.parse(tampered).verify("correct horse battery".toCharArray()));
        byte[] s = Base64.getDecoder().decode(f[2]);
        s[3] ^= 1;
        String saltTampered = f[0] + ":" + f[1] + ":" + Base64.getEncoder().encodeToString(s) + ":" + f[3];
        assertFalse(PasswordHash.parse(saltTampered).verify("correct horse battery".toCharArray()));
    }

    @Test
    void unknownAlgorithmIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PasswordHash.parse(hash.toString().replace("pbkdf2-sha256", "md5")));
        assertTrue(e.getMessage().contains("unknown password hash algorithm 'md5'"), e.getMessage());
    }

    @Test
    void badBase64IsNamed() {
        String[] f = hash.toString().split(":");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PasswordHash.parse(f[0] + ":" + f[1] + ":%%%not-base64:" + f[3]));
        assertTrue(e.getMessage().startsWith("salt is not valid Base64"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> PasswordHash.parse(f[0] + ":" + f[1] + ":" + f[2] + ":***"));
        assertTrue(e.getMessage().startsWith("hash is not valid Base64"), e.getMessage());
    }

    @Test
    void badIterationCountsAreNamed() {
        String[] f = hash.toString().split(":");
        String rest = ":" + f[2] + ":" + f[3];
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PasswordHash.parse(f[0] + ":1000" + rest))
                .getMessage().contains("iteration count 1000 is out of range"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PasswordHash.parse(f[0] + ":99999999" + rest))
                .getMessage().contains("out of range"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PasswordHash.parse(f[0] + ":lots" + rest))
                .getMessage().contains("iteration count 'lots' is not a number"));
    }

    @Test
    void wrongShapesAreNamed() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PasswordHash.parse("secret-in-clear-text"))
                .getMessage().contains("found 1 field(s)"));
        String[] f = hash.toString().split(":");
        String shortSalt = Base64.getEncoder().encodeToString(new byte[8]);
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> PasswordHash.parse(f[0] + ":" + f[1] + ":" + shortSalt + ":" + f[3])).getMessage()
                .contains("salt has 8 bytes, expected at least 16"));
        String shortHash = Base64.getEncoder().encodeToString(new byte[20]);
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> PasswordHash.parse(f[0] + ":" + f[1] + ":" + f[2] + ":" + shortHash)).getMessage()
                .contains("hash has 20 bytes, expected 32"));
    }
}
