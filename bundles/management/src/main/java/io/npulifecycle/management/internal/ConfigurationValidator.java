package io.npulifecycle.management.internal;

import io.npulifecycle.api.management.ConfigurationMXBean;
import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.api.management.DescribedMBean;

import java.lang.System.Logger.Level;
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import javax.management.DynamicMBean;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationEvent;
import org.osgi.service.cm.ConfigurationListener;
import org.osgi.service.cm.ConfigurationPlugin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.AttributeDefinition;
import org.osgi.service.metatype.MetaTypeInformation;
import org.osgi.service.metatype.MetaTypeService;
import org.osgi.service.metatype.ObjectClassDefinition;

import io.npulifecycle.api.management.Mbeans;

/**
 * Validates every {@code io.npulifecycle.*} configuration against its DS metatype before a component sees it.
 *
 * <p>ConfigAdmin calls this plugin when it delivers a configuration (Felix SCR reads configurations through
 * {@code Configuration.getProcessedProperties}, which runs the plugins). For each key:
 * <ul>
 * <li>unknown to the metatype: logged with the file and the key, and dropped;</li>
 * <li>not of the declared type (e.g. {@code interval=abc} for an Integer, {@code autoRecover=yes} for a Boolean),
 * or outside the declared min/max/options: logged with the file, the key, the value and what was expected, and
 * replaced by the last valid value this runtime delivered for that key (or removed, so the default applies, when
 * there was none).</li>
 * </ul>
 * The user's file is never rewritten, and the component keeps running with its previous valid configuration. Problems
 * are listed by the MBean {@code io.npulifecycle:type=Configuration}: the problems of each configuration as last
 * delivered (a configuration delivered without problems, or deleted, has none), and the values its component refused
 * ({@link ConfigurationRefusals}, until it accepts one); so the list reflects the current files.
 */
@Component(service = {ConfigurationPlugin.class, ConfigurationListener.class, ConfigurationRefusals.class,
    DynamicMBean.class}, property = {
    ConfigurationPlugin.CM_RANKING + ":Integer=500",
    Mbeans.OBJECT_NAME_PROPERTY + "=" + Mbeans.DOMAIN + ":type=Configuration"
})
public class ConfigurationValidator extends DescribedMBean implements ConfigurationPlugin, ConfigurationListener,
        ConfigurationRefusals, ConfigurationMXBean {

    /** Only configurations of this product are validated. */
    static final String PID_PREFIX = "io.npulifecycle.";
    static final String FILE_PROPERTY = "felix.fileinstall.filename";
    private static final int MAX_PROBLEMS = 100;
    private static final System.Logger LOG = System.getLogger(ConfigurationValidator.class.getName());

    @Reference
    private MetaTypeService metaTypeService;
    private BundleContext context;

    private final Map<String, Map<String, Object>> lastGood = new ConcurrentHashMap<>();
    /** The problems of each PID's configuration as last delivered, in key order; no entry when it had none. */
    private final Map<String, List<String>> problems = new ConcurrentHashMap<>();
    /** Every value a component refused of each PID's configuration, in its order, until it accepts one. */
    private final Map<String, List<String>> refusals = new ConcurrentHashMap<>();
    private final AtomicLong rejected = new AtomicLong();
    private OcdLookup lookup;

    /** Finds the metatype of a PID; replaced in tests. */
    @FunctionalInterface
    interface OcdLookup {
        /** @return the definition, or {@code null} when no bundle declares one */
        ObjectClassDefinition find(String pid);
    }

    /** DS constructor. */
    public ConfigurationValidator() {
        super(ConfigurationMXBean.class);
    }

    /** Test constructor. */
    ConfigurationValidator(OcdLookup lookup) {
        this();
        this.lookup = lookup;
    }

    @Activate
    void activate(BundleContext ctx) {
        this.context = ctx;
        this.lookup = this::findInBundles;
    }

    @Override
    public void modifyConfiguration(ServiceReference<?> reference, Dictionary<String, Object> properties) {
        Object pidValue = properties.get(Constants.SERVICE_PID);
        if (!(pidValue instanceof String)) {
            return;
        }
        String pid = (String) pidValue;
        Object factoryPid = properties.get(ConfigurationPluginKeys.FACTORY_PID);
        String definitionPid = factoryPid instanceof String ? (String) factoryPid : pid;
        if (!definitionPid.startsWith(PID_PREFIX)) {
            return;
        }
        ObjectClassDefinition ocd = lookup.find(definitionPid);
        if (ocd == null) {
            return;
        }
        Map<String, AttributeDefinition> ads = new HashMap<>();
        AttributeDefinition[] all = ocd.getAttributeDefinitions(ObjectClassDefinition.ALL);
        if (all != null) {
            for (AttributeDefinition ad : all) {
                ads.put(ad.getID(), ad);
            }
        }
        String file = String.valueOf(properties.get(FILE_PROPERTY));
        Map<String, Object> previous = lastGood.getOrDefault(pid, Collections.emptyMap());
        Map<String, Object> accepted = new LinkedHashMap<>();
        List<String> found = new ArrayList<>();
        // Copy the keys first: the loop removes and replaces entries.
        for (String key : Collections.list(properties.keys())) {
            if (isFrameworkKey(key)) {
                continue;
            }
            Object value = properties.get(key);
            AttributeDefinition ad = ads.get(key);
            if (ad == null) {
                properties.remove(key);
                problem(found, pid, file, "unknown key " + key + " ignored (known keys: " + String.join(", ",
                        new java.util.TreeSet<>(ads.keySet())) + ")");
                continue;
            }
            String error = validate(ad, value);
            if (error == null) {
                accepted.put(key, value);
                continue;
            }
            Object keep = previous.get(key);
            if (keep != null) {
                properties.put(key, keep);
                accepted.put(key, keep);
                problem(found, pid, file, "key " + key + "=" + render(value) + " " + error + "; keeping the previous value "
                        + render(keep));
            } else {
                properties.remove(key);
                problem(found, pid, file, "key " + key + "=" + render(value) + " " + error + "; using the default "
                        + render(ad.getDefaultValue()));
            }
        }
        lastGood.put(pid, accepted);
        if (found.isEmpty()) {
            problems.remove(pid);
        } else {
            problems.put(pid, List.copyOf(found));
        }
    }

    /** A deleted configuration has no problems any more, nor refused values. */
    @Override
    public void configurationEvent(ConfigurationEvent event) {
        if (event.getType() == ConfigurationEvent.CM_DELETED && event.getPid() != null) {
            problems.remove(event.getPid());
            refusals.remove(event.getPid());
            lastGood.remove(event.getPid());
        }
    }

    @Override
    public void refused(String pid, Object file, List<Refusal> refused) {
        if (refused == null || refused.isEmpty()) {
            throw new IllegalArgumentException("a refusal of " + pid + " names no refused value");
        }
        List<String> lines = new ArrayList<>();
        for (Refusal r : refused) {
            String line = "Configuration " + pid + (file == null ? "" : " (" + file + ")") + ": key " + r.key()
                    + (r.value() == null ? "" : "=" + render(r.value())) + " refused by "
                    + "the component: " + r.reason() + "; keeping its previous configuration";
            LOG.log(Level.WARNING, line);
            rejected.incrementAndGet();
            lines.add(line);
        }
        refusals.put(pid, List.copyOf(lines));
    }

    @Override
    public void accepted(String pid) {
        refusals.remove(pid);
    }

    /**
     * Checks one value against its attribute definition.
     *
     * @return {@code null} if valid, else what is wrong, e.g. {@code "is not a valid Integer"}
     */
    static String validate(AttributeDefinition ad, Object value) {
        List<String> values = flatten(value);
        if (ad.getCardinality() == 0 && values.size() > 1) {
            return "has " + values.size() + " values where one is expected";
        }
        for (String v : values) {
            String typeError = checkType(ad.getType(), v.trim());
            if (typeError != null) {
                return typeError;
            }
            String rangeError = ad.validate(v.trim());
            if (rangeError != null && !rangeError.isEmpty()) {
                return "is invalid: " + rangeError;
            }
        }
        return null;
    }

    private static String checkType(int type, String v) {
        try {
            switch (type) {
                case AttributeDefinition.INTEGER: Integer.parseInt(v); return null;
                case AttributeDefinition.LONG: Long.parseLong(v); return null;
                case AttributeDefinition.SHORT: Short.parseShort(v); return null;
                case AttributeDefinition.BYTE: Byte.parseByte(v); return null;
                case AttributeDefinition.DOUBLE:
                case AttributeDefinition.FLOAT:
                    double d = Double.parseDouble(v);
                    return Double.isFinite(d) ? null : "is not a finite number";
                case AttributeDefinition.BOOLEAN:
                    return "true".equalsIgnoreCase(v) || "false".equalsIgnoreCase(v) ? null
                            : "is not a Boolean (expected true or false)";
                case AttributeDefinition.CHARACTER:
                    return v.length() == 1 ? null : "is not a single character";
                default:
                    return null;
            }
        } catch (NumberFormatException e) {
            return "is not a valid " + typeName(type);
        }
    }

    private static String typeName(int type) {
        switch (type) {
            case AttributeDefinition.INTEGER: return "Integer";
            case AttributeDefinition.LONG: return "Long";
            case AttributeDefinition.SHORT: return "Short";
            case AttributeDefinition.BYTE: return "Byte";
            default: return "number";
        }
    }

    private static List<String> flatten(Object value) {
        List<String> out = new ArrayList<>();
        if (value == null) {
            return out;
        }
        if (value.getClass().isArray()) {
            for (int i = 0; i < Array.getLength(value); i++) {
                out.add(String.valueOf(Array.get(value, i)));
            }
        } else if (value instanceof Collection) {
            for (Object o : (Collection<?>) value) {
                out.add(String.valueOf(o));
            }
        } else {
            out.add(String.valueOf(value));
        }
        return out;
    }

    private static String render(Object value) {
        if (value == null) {
            return "(none)";
        }
        if (value.getClass().isArray()) {
            return "'" + String.join(",", flatten(value)) + "'";
        }
        return "'" + value + "'";
    }

    private static boolean isFrameworkKey(String key) {
        return key.startsWith("service.") || key.startsWith("felix.fileinstall.") || key.startsWith("component.")
                || key.startsWith(".") || key.equals("osgi.ds.satisfying.condition.target");
    }

    private void problem(List<String> found, String pid, String file, String what) {
        String line = "Configuration " + pid + " (" + file + "): " + what;
        LOG.log(Level.WARNING, line);
        rejected.incrementAndGet();
        found.add(line);
    }

    private ObjectClassDefinition findInBundles(String pid) {
        for (Bundle b : context.getBundles()) {
            MetaTypeInformation info = metaTypeService.getMetaTypeInformation(b);
            if (info == null) {
                continue;
            }
            if (contains(info.getPids(), pid) || contains(info.getFactoryPids(), pid)) {
                return info.getObjectClassDefinition(pid, null);
            }
        }
        return null;
    }

    private static boolean contains(String[] arr, String s) {
        if (arr != null) {
            for (String a : arr) {
                if (s.equals(a)) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public List<String> getProblems() {
        List<String> out = new ArrayList<>();
        Map<String, List<String>> byPid = new TreeMap<>(problems);
        refusals.forEach((pid, lines) -> byPid.merge(pid, lines, (a, b) -> {
            List<String> both = new ArrayList<>(a);
            both.addAll(b);
            return both;
        }));
        byPid.values().forEach(out::addAll);
        return out.size() > MAX_PROBLEMS ? new ArrayList<>(out.subList(0, MAX_PROBLEMS)) : out;
    }

    @Override
    public long getRejectedKeys() {
        return rejected.get();
    }

    /** Standard configuration property keys. */
    static final class ConfigurationPluginKeys {
        static final String FACTORY_PID = "service.factoryPid";

        private ConfigurationPluginKeys() {
        }
    }
}
