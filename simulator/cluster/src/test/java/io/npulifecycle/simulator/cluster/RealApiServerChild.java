package io.npulifecycle.simulator.cluster;

import java.io.IOException;

/**
 * A JVM that starts a {@link RealApiServer}, prints
 * {@code READY <etcd pid> <kube-apiserver pid> <kube-controller-manager pid> <data folder>} and waits until its
 * standard input ends: {@link RealApiServerTest} SIGKILLs it to leave the three processes behind.
 */
public final class RealApiServerChild {

    private RealApiServerChild() {
    }

    /**
     * @param args none
     * @throws IOException when standard input fails
     */
    public static void main(String[] args) throws IOException {
        RealApiServer api = RealApiServer.start();
        System.out.println("READY " + api.pids().get(0) + " " + api.pids().get(1) + " " + api.pids().get(2) + " "
                + api.dataFolder());
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the parent closes the pipe or kills this JVM
        }
        api.close();
    }
}
