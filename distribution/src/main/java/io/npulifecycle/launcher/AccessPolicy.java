package io.npulifecycle.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Document;

/**
 * Chooses the Jolokia access policy file, failing closed.
 *
 * <p>Jolokia allows everything when a classpath policy is not found, and a policy it cannot parse can break its
 * servlet (DESIGN.md, "Known traps"). So the launcher checks the configured file itself: it must be a readable XML
 * document whose root element is {@code <restrict>}. If it is not, the runtime uses a deny-all policy (no command
 * allowed, every MBean denied) and says why; an operator then fixes the file and restarts.
 */
public final class AccessPolicy {

    /**
     * The policy used when the configured one cannot be used. Jolokia answers {@code version} whatever the
     * {@code <commands>} list says, so the deny-all policy also admits no client address ({@code <remote>} lists only
     * the broadcast address, which never opens a TCP connection) and no HTTP method; every request gets
     * {@code "status":403}.
     */
    static final String DENY_ALL = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<!-- Written by the npu-lifecycle launcher: the configured Jolokia policy could not be used. -->\n"
            + "<restrict>\n"
            + "  <remote><host>255.255.255.255</host></remote>\n"
            + "  <http></http>\n"
            + "  <commands></commands>\n"
            + "  <deny><mbean><name>*:*</name><attribute>*</attribute><operation>*</operation></mbean></deny>\n"
            + "</restrict>\n";

    private final Path file;
    private final String problem;

    private AccessPolicy(Path file, String problem) {
        this.file = file;
        this.problem = problem;
    }

    /**
     * @param configured the configured policy file
     * @param runDir a folder of the home where the deny-all policy may be written
     * @return the policy to give Jolokia; {@link #problem()} is non-null when it is the deny-all one
     * @throws LaunchException ({@link LaunchException#HOME}) if even the deny-all policy cannot be written
     */
    public static AccessPolicy choose(Path configured, Path runDir) throws LaunchException {
        String problem = check(configured);
        if (problem == null) {
            return new AccessPolicy(configured.toAbsolutePath(), null);
        }
        Path denyAll = runDir.resolve("jolokia-deny-all.xml");
        try {
            Files.createDirectories(runDir);
            Files.writeString(denyAll, DENY_ALL, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new LaunchException(LaunchException.HOME, "cannot write " + denyAll + ": " + e, e);
        }
        return new AccessPolicy(denyAll.toAbsolutePath(), problem);
    }

    /**
     * @param file a policy file
     * @return {@code null} if usable, else why not
     */
    static String check(Path file) {
        if (!Files.isRegularFile(file)) {
            return "Jolokia access policy " + file + " does not exist";
        }
        if (!Files.isReadable(file)) {
            return "Jolokia access policy " + file + " is not readable";
        }
        try (InputStream in = Files.newInputStream(file)) {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            f.setExpandEntityReferences(false);
            DocumentBuilder b = f.newDocumentBuilder();
            b.setErrorHandler(null);
            Document d = b.parse(in);
            String root = d.getDocumentElement().getTagName();
            if (!"restrict".equals(root)) {
                return "Jolokia access policy " + file + " has root element <" + root + ">, expected <restrict>";
            }
            return null;
        } catch (IOException e) {
            return "Jolokia access policy " + file + " cannot be read: " + e.getMessage();
        } catch (Exception e) {
            return "Jolokia access policy " + file + " is not valid XML: " + e.getMessage();
        }
    }

    /** @return the absolute policy file to configure as a {@code file:} URL */
    public Path file() {
        return file;
    }

    /** @return {@code null} when the configured policy is used, else why every request will be refused */
    public String problem() {
        return problem;
    }
}
