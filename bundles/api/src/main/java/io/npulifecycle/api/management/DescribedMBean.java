package io.npulifecycle.api.management;

import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.List;

import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanOperationInfo;
import javax.management.MBeanParameterInfo;
import javax.management.StandardMBean;

/**
 * An MXBean whose {@code MBeanInfo} carries the {@link Description} texts of its MXBean interface (on the interface,
 * the getters, the operations and their parameters) and the interface's parameter names ({@code npu}, {@code chip})
 * instead of {@code p0}, {@code p1}: what consoles (Hawtio, jconsole, Jolokia {@code list}) show. The names come from
 * the class file (the build compiles with {@code -parameters}). Where an element has no {@link Description}, or the
 * class file has no parameter names, the JMX defaults stay.
 *
 * <p>Use it as {@link StandardMBean} is used: wrap an implementation ({@link #DescribedMBean(Object, Class)}, which
 * {@link MBeanRegistrations#register} does), or extend it in a class that implements the MXBean interface itself
 * ({@link #DescribedMBean(Class)}).
 */
public class DescribedMBean extends StandardMBean {

    private final Class<?> mxbeanInterface;

    /**
     * An MXBean calling {@code implementation}.
     *
     * @param <T> the MXBean interface
     * @param implementation the object the MBean calls
     * @param mxbeanInterface its MXBean interface
     * @throws IllegalArgumentException if {@code mxbeanInterface} does not follow the MXBean rules or
     *         {@code implementation} does not implement it
     */
    public <T> DescribedMBean(T implementation, Class<T> mxbeanInterface) {
        super(implementation, mxbeanInterface, true);
        this.mxbeanInterface = mxbeanInterface;
    }

    /**
     * An MXBean whose implementation is this object, for a subclass that implements {@code mxbeanInterface}.
     *
     * @param mxbeanInterface the MXBean interface the subclass implements
     * @throws IllegalArgumentException if {@code mxbeanInterface} does not follow the MXBean rules or this object does
     *         not implement it
     */
    protected DescribedMBean(Class<?> mxbeanInterface) {
        super(mxbeanInterface, true);
        this.mxbeanInterface = mxbeanInterface;
    }

    @Override
    protected String getDescription(MBeanInfo info) {
        Description d = mxbeanInterface.getAnnotation(Description.class);
        return d != null ? d.value() : super.getDescription(info);
    }

    @Override
    protected String getDescription(MBeanAttributeInfo info) {
        String name = info.getName();
        for (Method m : mxbeanInterface.getMethods()) {
            boolean getter = m.getParameterCount() == 0
                    && (m.getName().equals("get" + name) || m.getName().equals("is" + name));
            boolean setter = m.getParameterCount() == 1 && m.getName().equals("set" + name);
            Description d = m.getAnnotation(Description.class);
            if ((getter || setter) && d != null) {
                return d.value();
            }
        }
        return super.getDescription(info);
    }

    @Override
    protected String getDescription(MBeanOperationInfo info) {
        Method m = method(info);
        Description d = m == null ? null : m.getAnnotation(Description.class);
        return d != null ? d.value() : super.getDescription(info);
    }

    @Override
    protected String getParameterName(MBeanOperationInfo op, MBeanParameterInfo param, int sequence) {
        Parameter p = parameter(op, sequence);
        return p != null && p.isNamePresent() ? p.getName() : super.getParameterName(op, param, sequence);
    }

    @Override
    protected String getDescription(MBeanOperationInfo op, MBeanParameterInfo param, int sequence) {
        Parameter p = parameter(op, sequence);
        Description d = p == null ? null : p.getAnnotation(Description.class);
        return d != null ? d.value() : super.getDescription(op, param, sequence);
    }

    private Parameter parameter(MBeanOperationInfo op, int sequence) {
        Method m = method(op);
        return m == null || sequence >= m.getParameterCount() ? null : m.getParameters()[sequence];
    }

    /**
     * The interface method of an operation: by name and parameter count, and, among overloads of one count, by the
     * Java types the MXBean descriptor records ({@code originalType}).
     */
    private Method method(MBeanOperationInfo op) {
        MBeanParameterInfo[] sig = op.getSignature();
        List<Method> candidates = new ArrayList<>();
        for (Method m : mxbeanInterface.getMethods()) {
            if (m.getName().equals(op.getName()) && m.getParameterCount() == sig.length) {
                candidates.add(m);
            }
        }
        if (candidates.size() <= 1) {
            return candidates.isEmpty() ? null : candidates.get(0);
        }
        for (Method m : candidates) {
            boolean same = true;
            for (int i = 0; i < sig.length && same; i++) {
                Object original = sig[i].getDescriptor().getFieldValue("originalType");
                String type = original != null ? original.toString() : sig[i].getType();
                same = m.getGenericParameterTypes()[i].getTypeName().equals(type);
            }
            if (same) {
                return m;
            }
        }
        return null;
    }
}
