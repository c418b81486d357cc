package io.npulifecycle.security.tool;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;

import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * A salted PBKDF2 password hash, as stored in {@code etc/jolokia-users.properties}.
 *
 * <p>Text form: {@code pbkdf2-sha256:<iterations>:<salt>:<hash>}, salt and hash in standard Base64 (padding optional):
 * PBKDF2WithHmacSHA256, a random salt of {@value #SALT_BYTES} bytes, a derived key of {@value #HASH_BYTES} bytes,
 * {@value #DEFAULT_ITERATIONS} iterations by default (the minimum of the OWASP Password Storage Cheat Sheet,
 * 2023). Parsing accepts {@value #MIN_ITERATIONS} to {@value #MAX_ITERATIONS} iterations: fewer would be weak,
 * more would let one wrong password cost the runtime seconds of CPU. Pure Java, no OSGi: the launcher uses it on its
 * own class path ({@code hash-password}, the operator user from the environment).
 */
public final class PasswordHash {

    /** The only algorithm name of the text form. */
    public static final String ALGORITHM = "pbkdf2-sha256";
    /** Iterations of a new hash. */
    public static final int DEFAULT_ITERATIONS = 210_000;
    /** Fewest iterations accepted when parsing. */
    public static final int MIN_ITERATIONS = 210_000;
    /** Most iterations accepted when parsing (a hash is verified on the request path). */
    public static final int MAX_ITERATIONS = 5_000_000;
    /** Salt length of a new hash, bytes; parsing requires at least this. */
    public static final int SALT_BYTES = 16;
    /** Derived key length, bytes. */
    public static final int HASH_BYTES = 32;
    /** Shortest password {@code hash-password} accepts, characters. */
    public static final int MIN_PASSWORD_LENGTH = 12;

    private final int iterations;
    private final byte[] salt;
    private final byte[] hash;

    private PasswordHash(int iterations, byte[] salt, byte[] hash) {
        this.iterations = iterations;
        this.salt = salt;
        this.hash = hash;
    }

    /**
     * Hashes a new password.
     *
     * @param password the clear password (the caller should clear the array afterwards)
     * @param random the source of the salt
     * @return the hash with {@link #DEFAULT_ITERATIONS} iterations and a fresh {@value #SALT_BYTES}-byte salt
     */
    public static PasswordHash create(char[] password, SecureRandom random) {
        byte[] salt = new byte[SALT_BYTES];
        random.nextBytes(salt);
        return new PasswordHash(DEFAULT_ITERATIONS, salt, derive(password, salt, DEFAULT_ITERATIONS));
    }

    /**
     * Parses the text form.
     *
     * @param text {@code pbkdf2-sha256:<iterations>:<salt>:<hash>}
     * @return the hash
     * @throws IllegalArgumentException naming what is wrong (never the whole text): wrong number of fields, unknown
     *         algorithm, an iteration count that is not a number or out of range, a salt or hash that is not Base64 or
     *         has the wrong length
     */
    public static PasswordHash parse(String text) {
        String[] f = text.trim().split(":", -1);
        if (f.length != 4) {
            throw new IllegalArgumentException("expected " + ALGORITHM + ":<iterations>:<salt>:<hash> (4 fields "
                    + "separated by ':'), found " + f.length + " field(s)");
        }
        if (!ALGORITHM.equals(f[0])) {
            throw new IllegalArgumentException("unknown password hash algorithm '" + shorten(f[0]) + "', expected "
                    + ALGORITHM);
        }
        int iterations;
        try {
            iterations = Integer.parseInt(f[1]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("iteration count '" + shorten(f[1]) + "' is not a number");
        }
        if (iterations < MIN_ITERATIONS || iterations > MAX_ITERATIONS) {
            throw new IllegalArgumentException("iteration count " + iterations + " is out of range (expected "
                    + MIN_ITERATIONS + " to " + MAX_ITERATIONS + ")");
        }
        byte[] salt = base64(f[2], "salt");
        if (salt.length < SALT_BYTES) {
            throw new IllegalArgumentException("salt has " + salt.length + " bytes, expected at least " + SALT_BYTES);
        }
        byte[] hash = base64(f[3], "hash");
        if (hash.length != HASH_BYTES) {
            throw new IllegalArgumentException("hash has " + hash.length + " bytes, expected " + HASH_BYTES);
        }
        return new PasswordHash(iterations, salt, hash);
    }

    private static byte[] base64(String s, String what) {
        try {
            return Base64.getDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " is not valid Base64 (" + e.getMessage() + ")");
        }
    }

    private static String shorten(String s) {
        String clean = s.replaceAll("[^\\x20-\\x7e]", "?");
        return clean.length() > 40 ? clean.substring(0, 40) + "..." : clean;
    }

    /**
     * @param password a candidate password
     * @return {@code true} if it derives the same key (constant-time comparison)
     */
    public boolean verify(char[] password) {
        return MessageDigest.isEqual(hash, derive(password, salt, iterations));
    }

    private static byte[] derive(char[] password, byte[] salt, int iterations) {
        PBEKeySpec spec = new PBEKeySpec(password, salt, iterations, HASH_BYTES * 8);
        try {
            return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("PBKDF2WithHmacSHA256 is not available in this JVM", e);
        } finally {
            spec.clearPassword();
        }
    }

    /** @return the iteration count */
    public int iterations() {
        return iterations;
    }

    /** @return the text form, {@code pbkdf2-sha256:<iterations>:<salt>:<hash>} */
    @Override
    public String toString() {
        Base64.Encoder b = Base64.getEncoder().withoutPadding();
        return ALGORITHM + ":" + iterations + ":" + b.encodeToString(salt) + ":" + b.encodeToString(hash);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PasswordHash && toString().equals(o.toString());
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(hash);
    }
}
