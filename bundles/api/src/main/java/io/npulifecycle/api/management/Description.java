package io.npulifecycle.api.management;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The text a JMX console (Hawtio, jconsole, Jolokia {@code list}) shows for an MBean, an attribute, an operation or
 * an operation parameter. Put it on the MXBean interface, on its getter (attribute) or method (operation), and on
 * each operation parameter; {@link DescribedMBean} copies it into the MBean's {@code MBeanInfo}. A description
 * says what the value means and its unit (seconds, milliseconds, bytes, a count), and where the value comes from.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.TYPE, ElementType.METHOD, ElementType.PARAMETER })
public @interface Description {

    /** @return the description, one or two sentences */
    String value();
}
