package io.npulifecycle.security.internal;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;

import org.jolokia.server.core.restrictor.policy.PolicyRestrictor;
import org.jolokia.server.core.service.api.Restrictor;
import org.jolokia.server.core.util.HttpMethod;
import org.jolokia.server.core.util.RequestType;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The Jolokia restrictor of the runtime: the XML access policy ({@code etc/jolokia-access.xml}) AND the role rules
 * AND the forbidden MBeans.
 *
 * <p>Jolokia runs with {@code org.jolokia.useRestrictorService=true}: its {@code DelegatingRestrictor} asks every
 * {@link Restrictor} service and denies when there is none (jolokia-server-core 2.6.0), and it then ignores
 * {@code org.jolokia.policyLocation}; so this component loads the policy itself with Jolokia's own
 * {@link PolicyRestrictor}. When the policy file (framework property {@value #POLICY_PROPERTY}) is missing or not a
 * valid {@code <restrict>} document, activation fails and no restrictor is registered: every request is denied. The
 * file is re-read when it changes ({@link #reloadIfChanged()}); a broken or removed new version keeps the policy
 * loaded before and says why (ERROR log and audit log).
 *
 * <p>Rules, each on top of the policy:
 * <ul>
 * <li>no caller on the thread ({@link AccessFilter} did not run): everything denied;</li>
 * <li>{@code viewer}: types read, list, search, version; reads on {@link #READABLE_DOMAINS};</li>
 * <li>{@code operator}: also exec and write, only on {@code io.npulifecycle} MBeans;</li>
 * <li>nobody: {@code jdk.management.jfr}, {@code com.sun.management:type=DiagnosticCommand},
 * {@code com.sun.management:type=HotSpotDiagnostic}, {@code javax.management.loading} and any MBean that is a class
 * loader (MLet and the like); these are also hidden from list and search;</li>
 * <li>CORS: an {@code Origin} (or {@code Referer}) is accepted only when it matches an {@code <allow-origin>} of the
 * policy; with none, no origin is (Jolokia's own checker would allow every origin). A request without either header
 * is not a browser's cross-site request and is not refused for that (Jolokia's {@code <strict-checking/>} would refuse
 * it, breaking every non-browser client).</li>
 * </ul>
 * Every exec and write decision goes to the audit log.
 */
@Component(service = Restrictor.class, immediate = true)
public class RoleRestrictor implements Restrictor {

    /** Framework property: absolute path of the policy file. */
    public static final String POLICY_PROPERTY = "npu.lifecycle.jolokia.policy";
    /** Domains whose attributes may be read (besides the forbidden MBeans). */
    static final Set<String> READABLE_DOMAINS = Set.of("io.npulifecycle", "java.lang", "java.nio",
            "java.util.logging", "JMImplementation");
    /** The only domain of exec and write. */
    static final String PRODUCT_DOMAIN = "io.npulifecycle";
    static final Set<RequestType> VIEWER_TYPES = Set.of(RequestType.READ, RequestType.LIST, RequestType.SEARCH,
            RequestType.VERSION);
    static final Set<RequestType> OPERATOR_TYPES = Set.of(RequestType.READ, RequestType.LIST, RequestType.SEARCH,
            RequestType.VERSION, RequestType.EXEC, RequestType.WRITE);

    private static final Logger LOG = System.getLogger(RoleRestrictor.class.getName());

    /** The active restrictor with a loaded policy, or {@code null}: {@link AccessFilter} refuses everything then. */
    private static volatile RoleRestrictor active;

    /** A loaded policy: Jolokia's restrictor over it and its CORS settings, swapped whole on a reload. */
    private record Loaded(Restrictor restrictor, List<Pattern> origins, boolean strict) {
    }

    private volatile Loaded loaded;
    /** The policy file, or {@code null} when loaded from bytes only (tests). */
    private Path file;
    /** "size/mtime" of the file version loaded or refused last, "missing" when it was absent. */
    private String stamp;
    private MBeanServer server = ManagementFactory.getPlatformMBeanServer();

    @Activate
    void activate(BundleContext context) {
        String p = context.getProperty(POLICY_PROPERTY);
        if (p == null || p.isBlank()) {
            String msg = "no Jolokia access policy configured (framework property " + POLICY_PROPERTY
                    + "): every Jolokia request is denied";
            Audit.problem(msg);
            throw new IllegalStateException(msg);
        }
        try {
            loadFile(Path.of(p));
            active = this;
        } catch (IOException | RuntimeException e) {
            String msg = "Jolokia access policy " + p + " cannot be used (" + e.getMessage()
                    + "): every Jolokia request is denied";
            Audit.problem(msg);
            throw new IllegalStateException(msg, e);
        }
    }

    /**
     * Loads a policy.
     *
     * @param xml the policy document
     * @param source its name for messages
     * @throws IllegalArgumentException when it is not a valid {@code <restrict>} document (DOCTYPE refused)
     */
    void load(byte[] xml, String source) {
        Document d;
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            f.setExpandEntityReferences(false);
            f.setNamespaceAware(false);
            javax.xml.parsers.DocumentBuilder b = f.newDocumentBuilder();
            b.setErrorHandler(null);
            d = b.parse(new ByteArrayInputStream(xml));
        } catch (Exception e) {
            throw new IllegalArgumentException(source + " is not valid XML: " + e.getMessage(), e);
        }
        if (!"restrict".equals(d.getDocumentElement().getTagName())) {
            throw new IllegalArgumentException(source + " has root element <" + d.getDocumentElement().getTagName()
                    + ">, expected <restrict>");
        }
        List<Pattern> o = new ArrayList<>();
        boolean strict = false;
        NodeList cors = d.getElementsByTagName("cors");
        for (int i = 0; i < cors.getLength(); i++) {
            NodeList kids = cors.item(i).getChildNodes();
            for (int j = 0; j < kids.getLength(); j++) {
                Node n = kids.item(j);
                if (n instanceof Element && "allow-origin".equals(n.getNodeName())) {
                    String v = n.getTextContent().trim().toLowerCase(Locale.ROOT);
                    o.add(Pattern.compile(Pattern.quote(v).replace("*", "\\E.*\\Q")));
                } else if (n instanceof Element && "strict-checking".equals(n.getNodeName())) {
                    strict = true;
                }
            }
        }
        Restrictor r;
        try {
            r = new PolicyRestrictor(new ByteArrayInputStream(xml));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(source + " is not a valid Jolokia policy: " + e.getMessage(), e);
        }
        this.loaded = new Loaded(r, List.copyOf(o), strict);
        LOG.log(Level.INFO, "Jolokia access policy {0} loaded: {1} allowed origin(s)", source, o.size());
    }

    @org.osgi.service.component.annotations.Deactivate
    void deactivate() {
        if (active == this) {
            active = null;
        }
    }

    /**
     * Loads the policy from a file, which {@link #reload()} then watches.
     *
     * @param f the policy file
     * @throws IOException when it cannot be read
     * @throws IllegalArgumentException when it is not a valid policy
     */
    synchronized void loadFile(Path f) throws IOException {
        String s = stamp(f);
        load(Files.readAllBytes(f), f.toString());
        file = f;
        stamp = s;
    }

    /**
     * Re-reads the policy file of the active restrictor when its size or modification time changed (called by the
     * {@link AccessFilter} on each request: one {@code stat}). A valid new policy replaces the old one at once; a
     * broken or removed file keeps the previous policy, and the problem (file and reason) is logged as an ERROR and
     * audited once per version of the file.
     */
    static void reloadIfChanged() {
        RoleRestrictor r = active;
        if (r != null) {
            r.reload();
        }
    }

    /** @return the policy file of the active restrictor, for messages ("etc/jolokia-access.xml" when unknown) */
    static String policyFile() {
        RoleRestrictor r = active;
        return r == null || r.file == null ? "etc/jolokia-access.xml" : r.file.toString();
    }

    synchronized void reload() {
        if (file == null) {
            return;
        }
        String now = stamp(file);
        if (now.equals(stamp)) {
            return;
        }
        stamp = now;
        if ("missing".equals(now)) {
            String msg = "Jolokia access policy " + file + " was removed: keeping the policy loaded before; "
                    + "put the file back to change it";
            LOG.log(Level.ERROR, msg);
            Audit.problem(msg);
            return;
        }
        try {
            load(Files.readAllBytes(file), file.toString());
        } catch (IOException | RuntimeException e) {
            String msg = "Jolokia access policy " + file + " changed but cannot be used (" + e.getMessage()
                    + "): keeping the policy loaded before";
            LOG.log(Level.ERROR, msg);
            Audit.problem(msg);
        }
    }

    private static String stamp(Path f) {
        try {
            java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(f,
                    java.nio.file.attribute.BasicFileAttributes.class);
            return a.size() + "/" + a.lastModifiedTime().toMillis();
        } catch (IOException e) {
            return "missing";
        }
    }

    /**
     * @param origin an {@code Origin} or {@code Referer} value
     * @return whether the active policy lists it (always strict; {@code false} without an active restrictor)
     */
    static boolean originAllowed(String origin) {
        RoleRestrictor r = active;
        return r != null && r.matchesOrigin(origin);
    }

    /** @return whether a restrictor with a loaded policy is active (else nothing may pass) */
    static boolean ready() {
        return active != null;
    }

    /** For tests: the MBeanServer used to recognise class loaders. */
    void setServer(MBeanServer s) {
        this.server = s;
    }

    @Override
    public boolean isHttpMethodAllowed(HttpMethod method) {
        return Caller.current() != null && loaded.restrictor().isHttpMethodAllowed(method);
    }

    @Override
    public boolean isTypeAllowed(RequestType type) {
        Caller c = Caller.current();
        if (c == null) {
            return false;
        }
        Set<RequestType> allowed = c.role() == io.npulifecycle.security.tool.Role.OPERATOR ? OPERATOR_TYPES
                : VIEWER_TYPES;
        return allowed.contains(type) && loaded.restrictor().isTypeAllowed(type);
    }

    @Override
    public boolean isAttributeReadAllowed(ObjectName name, String attribute) {
        return Caller.current() != null && readable(name) && loaded.restrictor().isAttributeReadAllowed(name, attribute);
    }

    @Override
    public boolean isAttributeWriteAllowed(ObjectName name, String attribute) {
        return decide("write", name, attribute, loaded.restrictor().isAttributeWriteAllowed(name, attribute),
                notWritable(name, attribute));
    }

    /**
     * @return why {@code attribute} of {@code name} cannot be written (the MBean has no such attribute, or it is
     *         read-only), or {@code null} when it is writable or cannot be told (a pattern, no such MBean): so that a write that would fail is
     *         audited as denied with the reason, not as allowed
     */
    String notWritable(ObjectName name, String attribute) {
        if (name.isPattern() || attribute == null) {
            return null;
        }
        try {
            for (javax.management.MBeanAttributeInfo a : server.getMBeanInfo(name).getAttributes()) {
                if (a.getName().equals(attribute)) {
                    return a.isWritable() ? null : "attribute " + attribute + " is read-only";
                }
            }
            return "MBean has no attribute " + attribute;
        } catch (javax.management.JMException e) {
            // no such MBean (Jolokia answers 404) or its info cannot be read: nothing to add
            return null;
        }
    }

    @Override
    public boolean isOperationAllowed(ObjectName name, String operation) {
        return decide("exec", name, operation, loaded.restrictor().isOperationAllowed(name, operation), null);
    }

    private boolean decide(String action, ObjectName name, String member, boolean policyAllows, String impossible) {
        Caller c = Caller.current();
        String reason = null;
        if (c == null) {
            reason = "no authenticated caller on this thread (access filter missing)";
        } else if (c.role() != io.npulifecycle.security.tool.Role.OPERATOR) {
            reason = "role " + c.role().id() + " may not " + action;
        } else if (forbidden(name)) {
            reason = "MBean is never reachable through Jolokia";
        } else if (!PRODUCT_DOMAIN.equals(name.getDomain()) || name.isDomainPattern()) {
            reason = "operators may " + action + " only on " + PRODUCT_DOMAIN + " MBeans";
        } else if (!policyAllows) {
            reason = "denied by the access policy";
        } else if (impossible != null) {
            reason = impossible;
        }
        Audit.decision(action, c, String.valueOf(name), member, reason == null, reason);
        return reason == null;
    }

    @Override
    public boolean isRemoteAccessAllowed(String... hostOrAddress) {
        return Caller.current() != null && loaded.restrictor().isRemoteAccessAllowed(hostOrAddress);
    }

    @Override
    public boolean isOriginAllowed(String origin, boolean onlyWhenStrictCheckingIsEnabled) {
        if (onlyWhenStrictCheckingIsEnabled && !loaded.strict()) {
            return true;
        }
        if (origin == null) {
            return true;
        }
        return matchesOrigin(origin);
    }

    private boolean matchesOrigin(String origin) {
        String o = origin.trim().toLowerCase(Locale.ROOT);
        for (Pattern p : loaded.origins()) {
            if (p.matcher(o).matches()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean isObjectNameHidden(ObjectName name) {
        return forbidden(name) || loaded.restrictor().isObjectNameHidden(name);
    }

    @Override
    public boolean ignoreScheme() {
        return loaded.restrictor().ignoreScheme();
    }

    /** @return whether a read on this name is allowed by the role rules (any role) */
    boolean readable(ObjectName name) {
        return !name.isDomainPattern() && READABLE_DOMAINS.contains(name.getDomain()) && !forbidden(name);
    }

    /** @return whether nobody may reach this MBean */
    boolean forbidden(ObjectName name) {
        if (forbiddenName(name)) {
            return true;
        }
        if (!name.isPattern()) {
            try {
                return server.isInstanceOf(name, ClassLoader.class.getName())
                        || server.isInstanceOf(name, "javax.management.loading.MLetMBean");
            } catch (javax.management.InstanceNotFoundException e) {
                return false;
            }
        }
        return false;
    }

    /** @return whether the name alone says that nobody may reach the MBean (domain pattern, JFR, diagnostics, MLet) */
    static boolean forbiddenName(ObjectName name) {
        String domain = name.getDomain();
        if (name.isDomainPattern()) {
            // a domain pattern could match a forbidden domain
            return true;
        }
        if ("jdk.management.jfr".equals(domain) || domain.startsWith("javax.management.loading")) {
            return true;
        }
        if ("com.sun.management".equals(domain)) {
            String type = name.getKeyProperty("type");
            if (type == null || "DiagnosticCommand".equals(type) || "HotSpotDiagnostic".equals(type)) {
                return true;
            }
        }
        return name.getCanonicalName().toLowerCase(Locale.ROOT).contains("mlet");
    }
}
