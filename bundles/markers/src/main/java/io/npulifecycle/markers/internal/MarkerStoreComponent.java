package io.npulifecycle.markers.internal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventAdmin;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import io.npulifecycle.api.management.ConfigDefaults;
import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.api.management.MBeanRegistrations;
import io.npulifecycle.api.management.RefusalReporter;
import io.npulifecycle.api.markers.Marker;
import io.npulifecycle.api.markers.MarkerChange;
import io.npulifecycle.api.markers.MarkerListener;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.MarkerStoreException;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.markers.MarkersMXBean;
import io.npulifecycle.api.time.TimeSource;

/**
 * The {@link MarkerStore} service, PID {@value #PID}; also registers the {@code io.npulifecycle:type=Markers} MBean
 * and posts {@link Markers#TOPIC_CHANGED} events. An invalid configuration is logged and the previous one is kept.
 */
@Component(configurationPid = MarkerStoreComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL,
        service = MarkerStore.class)
@Designate(ocd = MarkerStoreComponent.Config.class)
public class MarkerStoreComponent implements MarkerStore {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.markers";
    private static final System.Logger LOG = System.getLogger(MarkerStoreComponent.class.getName());

    /** Configuration of the marker store. */
    @ObjectClassDefinition(name = "npu-lifecycle marker store", description = "Host folder of the driver-ready and reboot-required markers and of the per-boot state files.")
    public @interface Config {
        /** @return the folder */
        @AttributeDefinition(name = "Marker folder", description = "Host folder of marker and state files (a tmpfs: a reboot clears it).")
        String folder() default "/run/npu-operator/";

        /** @return the boot id path */
        @AttributeDefinition(name = "Boot id file", description = "File holding the current boot id.")
        String bootIdPath() default "/proc/sys/kernel/random/boot_id";
    }

    private final TimeSource time;

    /** Where refused values are listed (the management bundle's Configuration MBean), when present. */
    private final RefusalReporter refusals = new RefusalReporter();

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile EventAdmin eventAdmin;

    private FileMarkerStore store;
    private MBeanRegistrations.Registration mbeanRegistration;
    private Config current;

    /** @param time the runtime clock (the time of the marker files' changes) */
    @Activate
    public MarkerStoreComponent(@Reference(name = "time") TimeSource time) {
        this.time = time;
    }

    /**
     * @param r the service that lists refused values (DS: optional and dynamic, so its arrival or departure never
     *        restarts the marker store)
     */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    void bindRefusals(ConfigurationRefusals r) {
        refusals.bind(r);
    }

    /** @param r the service that goes away */
    void unbindRefusals(ConfigurationRefusals r) {
        refusals.unbind(r);
    }

    @Activate
    void activate(BundleContext context, Config config) {
        Path folder = validFolder(config);
        if (folder == null) {
            // the refusal stays reported: the default folder runs until a configuration is accepted
            folder = Path.of(ConfigDefaults.of(Config.class).folder());
        }
        store = new FileMarkerStore(folder, bootId(config.bootIdPath()), time::now, this::post);
        store.retryBootIdFrom(Path.of(config.bootIdPath()));
        current = config;
        LOG.log(Level.INFO, "marker store on " + folder + ", boot id " + store.bootId());
        try {
            mbeanRegistration = MBeanRegistrations.register(context, MarkersMXBean.class, new MarkersMBean(store),
                    MarkersMXBean.OBJECT_NAME);
        } catch (IllegalArgumentException e) {
            LOG.log(Level.ERROR, "cannot register the Markers MBean", e);
        }
    }

    @Modified
    void modified(Config config) {
        Path folder = validFolder(config);
        if (folder == null) {
            return;
        }
        store.reconfigure(folder, bootId(config.bootIdPath()));
        store.retryBootIdFrom(Path.of(config.bootIdPath()));
        current = config;
        LOG.log(Level.INFO, "marker store reconfigured: folder " + folder + ", boot id " + store.bootId());
    }

    @Deactivate
    void deactivate() {
        if (mbeanRegistration != null) {
            mbeanRegistration.unregister();
        }
    }

    private Path validFolder(Config config) {
        String f = config.folder();
        if (f == null || f.isBlank()) {
            LOG.log(Level.ERROR, "PID " + PID + " key folder is empty: keeping the previous configuration");
            refused(f, "is empty (an absolute folder is expected)");
            return null;
        }
        try {
            Path p = Path.of(f.trim());
            if (!p.isAbsolute()) {
                LOG.log(Level.ERROR, "PID " + PID + " key folder '" + f + "' is not absolute: keeping the previous configuration");
                refused(f, "is not absolute (an absolute folder is expected)");
                return null;
            }
            refusals.accepted(PID);
            return p;
        } catch (InvalidPathException e) {
            LOG.log(Level.ERROR, "PID " + PID + " key folder '" + f + "' is not a path: keeping the previous configuration");
            refused(f, "is not a path (an absolute folder is expected)");
            return null;
        }
    }

    private void refused(String folder, String reason) {
        refusals.refused(PID, "folder", folder, reason);
    }

    private String bootId(String path) {
        try {
            return FileMarkerStore.readBootId(Path.of(path));
        } catch (IOException | InvalidPathException e) {
            String previous = store == null ? FileMarkerStore.UNKNOWN_BOOT_ID : store.bootId();
            LOG.log(Level.ERROR, "PID " + PID + " key bootIdPath: cannot read boot id from " + path + " (" + e
                    + "); using '" + previous + "'");
            return previous;
        }
    }

    private void post(MarkerChange change) {
        EventAdmin ea = eventAdmin;
        if (ea == null) {
            return;
        }
        Map<String, Object> props = new HashMap<>();
        props.put(Markers.EVENT_MARKER, change.marker());
        props.put(Markers.EVENT_PRESENT, change.present());
        if (change.reason() != null) {
            props.put(Markers.EVENT_REASON, change.reason());
        }
        if (change.writer() != null) {
            props.put(Markers.EVENT_WRITER, change.writer());
        }
        props.put(Markers.EVENT_CHANGE_COUNT, change.changeCount());
        ea.postEvent(new Event(Markers.TOPIC_CHANGED, props));
    }

    @Override
    public Path folder() {
        return store.folder();
    }

    @Override
    public String bootId() {
        return store.bootId();
    }

    @Override
    public MarkerRead read(String name) {
        return store.read(name);
    }

    @Override
    public List<MarkerRead> readAll() {
        return store.readAll();
    }

    @Override
    public Marker write(String name, Map<String, String> content, String writer) throws MarkerStoreException {
        return store.write(name, content, writer);
    }

    @Override
    public boolean remove(String name, String writer) throws MarkerStoreException {
        return store.remove(name, writer);
    }

    @Override
    public Map<String, String> readState(String name) {
        return store.readState(name);
    }

    @Override
    public void writeState(String name, Map<String, String> state) throws MarkerStoreException {
        store.writeState(name, state);
    }

    @Override
    public long changeCount() {
        return store.changeCount();
    }

    @Override
    public void addListener(MarkerListener listener) {
        store.addListener(listener);
    }

    @Override
    public void removeListener(MarkerListener listener) {
        store.removeListener(listener);
    }
}
