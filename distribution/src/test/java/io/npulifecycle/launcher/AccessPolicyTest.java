package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AccessPolicyTest {

    @TempDir
    Path dir;

    @Test
    void aValidPolicyIsUsed() throws Exception {
        Path p = dir.resolve("jolokia-access.xml");
        Files.writeString(p, "<restrict><commands><command>read</command></commands></restrict>");
        AccessPolicy a = AccessPolicy.choose(p, dir.resolve("run"));
        assertNull(a.problem());
        assertEquals(p.toAbsolutePath(), a.file());
    }

    @Test
    void missingMalformedOrWrongRootFailsClosed() throws Exception {
        Path missing = dir.resolve("nope.xml");
        Path garbage = Files.writeString(dir.resolve("garbage.xml"), "<restrict><commands>");
        Path wrongRoot = Files.writeString(dir.resolve("wrong.xml"), "<allow-all/>");
        Path doctype = Files.writeString(dir.resolve("xxe.xml"),
                "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><restrict>&x;</restrict>");
        for (Path p : new Path[] {missing, garbage, wrongRoot, doctype}) {
            AccessPolicy a = AccessPolicy.choose(p, dir.resolve("run"));
            assertNotNull(a.problem(), p.toString());
            assertTrue(a.problem().contains(p.toString()), a.problem());
            assertEquals(dir.resolve("run").resolve("jolokia-deny-all.xml").toAbsolutePath(), a.file());
            String denyAll = Files.readString(a.file());
            assertTrue(denyAll.contains("<commands></commands>"), "no command is allowed");
            assertTrue(denyAll.contains("<remote><host>255.255.255.255</host></remote>"), "no client is allowed");
        }
    }
}
