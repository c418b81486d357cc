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
 * valid {@code <restrict>} document, activation fails and no restrictor is registered: every request is denied.
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

    private Restrictor policy;
    private List<Pattern> origins;
    private boolean strictOrigin;
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
            load(Files.readAllBytes(Path.of(p)), p);
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
        this.origins = List.copyOf(o);
        this.strictOrigin = strict;
        this.policy = r;
        LOG.log(Level.INFO, "Jolokia access policy {0} loaded: {1} allowed origin(s)", source, o.size());
    }

    @org.osgi.service.component.annotations.Deactivate
    void deactivate() {
        if (active == this) {
            active = null;
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
        return Caller.current() != null && policy.isHttpMethodAllowed(method);
    }

    @Override
    public boolean isTypeAllowed(RequestType type) {
        Caller c = Caller.current();
        if (c == null) {
            return false;
        }
        Set<RequestType> allowed = c.role() == io.npulifecycle.security.tool.Role.OPERATOR ? OPERATOR_TYPES
                : VIEWER_TYPES;
        return allowed.contains(type) && policy.isTypeAllowed(type);
    }

    @Override
    public boolean isAttributeReadAllowed(ObjectName name, String attribute) {
        return Caller.current() != null && readable(name) && policy.isAttributeReadAllowed(name, attribute);
    }

    @Override
    public boolean isAttributeWriteAllowed(ObjectName name, String attribute) {
        return decide("write", name, attribute, policy.isAttributeWriteAllowed(name, attribute));
    }

    @Override
    public boolean isOperationAllowed(ObjectName name, String operation) {
        return decide("exec", name, operation, policy.isOperationAllowed(name, operation));
    }

    private boolean decide(String action, ObjectName name, String member, boolean policyAllows) {
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
        }
        Audit.decision(action, c, String.valueOf(name), member, reason == null, reason);
        return reason == null;
    }

    @Override
    public boolean isRemoteAccessAllowed(String... hostOrAddress) {
        return Caller.current() != null && policy.isRemoteAccessAllowed(hostOrAddress);
    }

    @Override
    public boolean isOriginAllowed(String origin, boolean onlyWhenStrictCheckingIsEnabled) {
        if (onlyWhenStrictCheckingIsEnabled && !strictOrigin) {
            return true;
        }
        if (origin == null) {
            return true;
        }
        return matchesOrigin(origin);
    }

    private boolean matchesOrigin(String origin) {
        String o = origin.trim().toLowerCase(Locale.ROOT);
        for (Pattern p : origins) {
            if (p.matcher(o).matches()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean isObjectNameHidden(ObjectName name) {
        return forbidden(name) || policy.isObjectNameHidden(name);
    }

    @Override
    public boolean ignoreScheme() {
        return policy.ignoreScheme();
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
