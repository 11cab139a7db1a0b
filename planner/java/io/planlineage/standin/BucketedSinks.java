package io.planlineage.standin;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;

import org.apache.flink.table.connector.sink.DynamicTableSink;

/**
 * Bucketed sinks (`DISTRIBUTED BY ... INTO n BUCKETS`, Flink 1.20+) must implement
 * SupportsBucketing, an interface older versions do not have. The stand-in is compiled against
 * every version's jars, so on versions that have it the sink is wrapped in a proxy that also
 * implements it (every algorithm, bucket count optional) and delegates the rest.
 */
final class BucketedSinks {
    private static final String BUCKETING = "org.apache.flink.table.connector.sink.abilities.SupportsBucketing";
    private static final String KIND = "org.apache.flink.table.catalog.TableDistribution$Kind";

    private BucketedSinks() {}

    static DynamicTableSink withBucketing(DynamicTableSink sink) {
        ClassLoader loader = BucketedSinks.class.getClassLoader();
        Class<?> bucketing;
        try {
            bucketing = Class.forName(BUCKETING, false, loader);
        } catch (ClassNotFoundException e) {
            return sink; // 1.18, 1.19: no bucketed tables
        }
        List<Class<?>> interfaces = new ArrayList<>(Arrays.asList(sink.getClass().getInterfaces()));
        interfaces.add(bucketing);
        return (DynamicTableSink) Proxy.newProxyInstance(loader, interfaces.toArray(new Class<?>[0]), new Handler(sink));
    }

    private static final class Handler implements InvocationHandler {
        private final DynamicTableSink delegate;

        Handler(DynamicTableSink delegate) {
            this.delegate = delegate;
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            switch (method.getName()) {
                case "listAlgorithms":
                    return EnumSet.allOf((Class<Enum>) Class.forName(KIND, false, BucketedSinks.class.getClassLoader()));
                case "requiresBucketCount":
                    return false;
                case "copy":
                    return withBucketing(delegate.copy());
                default:
                    try {
                        return method.invoke(delegate, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
            }
        }
    }
}
