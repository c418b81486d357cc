package io.npulifecycle.api.management;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import javax.management.DynamicMBean;
import javax.management.MBeanOperationInfo;

import org.junit.jupiter.api.Test;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

class MBeanRegistrationsTest {

    /** An MXBean for the test. */
    public interface CounterMXBean {
        int getCount();

        String reset(String why);
    }

    static final class Counter implements CounterMXBean {
        int count = 7;

        @Override
        public int getCount() {
            return count;
        }

        @Override
        public String reset(String why) {
            count = 0;
            return "reset: " + why;
        }
    }

    /** Not an MXBean: a return type JMX cannot map to open data. */
    public interface BrokenMXBean {
        Thread getThread();
    }

    /** A bundle context that records registerService calls; only that method is used. */
    static final class Registry {
        final List<Class<?>> types = new ArrayList<>();
        final List<Object> services = new ArrayList<>();
        final List<Dictionary<String, ?>> properties = new ArrayList<>();
        final AtomicInteger unregisterCalls = new AtomicInteger();
        /** the framework's answer to unregister(): null = fine, else thrown */
        RuntimeException unregisterFailure;

        BundleContext context() {
            return (BundleContext) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {BundleContext.class}, (proxy, method, args) -> {
                        if (method.getName().equals("registerService") && args[0] instanceof Class) {
                            types.add((Class<?>) args[0]);
                            services.add(args[1]);
                            properties.add((Dictionary<String, ?>) args[2]);
                            return registration();
                        }
                        throw new UnsupportedOperationException(method.toString());
                    });
        }

        ServiceRegistration<?> registration() {
            return (ServiceRegistration<?>) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {ServiceRegistration.class}, (proxy, method, args) -> {
                        if (method.getName().equals("unregister")) {
                            unregisterCalls.incrementAndGet();
                            if (unregisterFailure != null) {
                                throw unregisterFailure;
                            }
                            return null;
                        }
                        throw new UnsupportedOperationException(method.toString());
                    });
        }
    }

    @Test
    void registersADynamicMBeanServiceWithTheObjectNameThatCallsTheImplementation() throws Exception {
        Registry r = new Registry();
        Counter counter = new Counter();
        MBeanRegistrations.Registration reg = MBeanRegistrations.register(r.context(), CounterMXBean.class, counter,
                "io.npulifecycle:type=Counter,npu=0");
        assertEquals(List.of(DynamicMBean.class), r.types);
        assertEquals("io.npulifecycle:type=Counter,npu=0", r.properties.get(0).get(Mbeans.OBJECT_NAME_PROPERTY));
        assertEquals("io.npulifecycle:type=Counter,npu=0", reg.objectName());
        DynamicMBean mbean = (DynamicMBean) r.services.get(0);
        assertEquals(7, mbean.getAttribute("Count"));
        assertTrue(mbean.getMBeanInfo().getDescriptor().getFieldValue("mxbean").equals("true"), "an MXBean");
        MBeanOperationInfo[] ops = mbean.getMBeanInfo().getOperations();
        assertEquals("why", ops[0].getSignature()[0].getName(), "the parameter's own name, not p1");
        assertEquals("reset", ops[0].getName());
        assertEquals("reset: test", mbean.invoke("reset", new Object[] {"test"}, new String[] {String.class.getName()}));
        assertEquals(0, counter.count);
    }

    @Test
    void unregisterIsIdempotentAndToleratesARegistrationGoneWithItsBundle() {
        Registry r = new Registry();
        MBeanRegistrations.Registration reg = MBeanRegistrations.register(r.context(), CounterMXBean.class,
                new Counter(), "io.npulifecycle:type=Counter");
        reg.unregister();
        reg.unregister();
        reg.close();
        assertEquals(1, r.unregisterCalls.get(), "the service is unregistered once");
        assertEquals("MBean io.npulifecycle:type=Counter (unregistered)", reg.toString());

        r.unregisterFailure = new IllegalStateException("Service already unregistered.");
        try (MBeanRegistrations.Registration gone = MBeanRegistrations.register(r.context(), CounterMXBean.class,
                new Counter(), "io.npulifecycle:type=Counter")) {
            gone.unregister();
        }
        assertEquals(2, r.unregisterCalls.get());
    }

    @Test
    void badInputIsRefusedNamingIt() {
        Registry r = new Registry();
        IllegalArgumentException name = assertThrows(IllegalArgumentException.class, () -> MBeanRegistrations
                .register(r.context(), CounterMXBean.class, new Counter(), "no colon"));
        assertTrue(name.getMessage().startsWith("MBean object name 'no colon' is not a JMX object name"),
                name.getMessage());
        IllegalArgumentException iface = assertThrows(IllegalArgumentException.class, () -> MBeanRegistrations
                .register(r.context(), BrokenMXBean.class, Thread::currentThread, "io.npulifecycle:type=Broken"));
        assertTrue(iface.getMessage().startsWith("MBean io.npulifecycle:type=Broken: "
                + BrokenMXBean.class.getName() + " is not a valid MXBean interface"), iface.getMessage());
        assertThrows(NullPointerException.class, () -> MBeanRegistrations.register(r.context(), CounterMXBean.class,
                null, "io.npulifecycle:type=Counter"));
        assertTrue(r.types.isEmpty(), "nothing registered");
    }
}
