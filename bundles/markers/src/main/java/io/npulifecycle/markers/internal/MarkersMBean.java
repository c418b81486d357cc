package io.npulifecycle.markers.internal;

import java.util.ArrayList;
import java.util.List;

import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkersMXBean;

/** {@code io.npulifecycle:type=Markers}: reads the folder at every call, so it always shows the files as they are. */
public final class MarkersMBean implements MarkersMXBean {
    private final FileMarkerStore store;

    /** @param store the store to show */
    public MarkersMBean(FileMarkerStore store) {
        this.store = store;
    }

    @Override
    public String getFolder() {
        return store.folder().toString();
    }

    @Override
    public String getBootId() {
        return store.bootId();
    }

    @Override
    public boolean isWritable() {
        return store.isWritable();
    }

    @Override
    public String getLastError() {
        return store.lastError();
    }

    @Override
    public long getChangeCount() {
        return store.changeCount();
    }

    @Override
    public List<MarkerView> getMarkers() {
        List<MarkerView> out = new ArrayList<>();
        for (MarkerRead r : store.readAll()) {
            out.add(new MarkerView(r));
        }
        return out;
    }
}
