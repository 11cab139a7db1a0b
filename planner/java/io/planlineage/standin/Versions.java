package io.planlineage.standin;

import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Collections;
import java.util.List;

import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.catalog.CatalogFunction;

/**
 * What differs between the Flink versions the stand-ins compile against, found by name so that one
 * source compiles on every version (1.15 … 2.x).
 */
final class Versions {
    private Versions() {}

    /** Whether a TableEnvironment takes `ADD JAR` (1.16+); 1.15 gets the jars in its class loader. */
    static final boolean ADD_JAR = classExists("org.apache.flink.table.resource.ResourceManager");

    private static boolean classExists(String name) {
        try {
            Class.forName(name, false, Versions.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** The user class loader of a job with jars on 1.15: the class path's, and the job's jars. */
    static ClassLoader withJars(List<String> jars) {
        URL[] urls = new URL[jars.size()];
        for (int i = 0; i < urls.length; i++) {
            try {
                urls[i] = new File(jars.get(i)).toURI().toURL();
            } catch (MalformedURLException e) {
                throw new IllegalArgumentException("jar " + jars.get(i) + " is not a path", e);
            }
        }
        return new URLClassLoader(urls, ServiceFiles.OF_CLASS_PATH);
    }

    /** The jars a function names (`USING JAR`): 1.16+; 1.15 has no such clause, so none. */
    static List<?> functionResources(CatalogFunction function) {
        try {
            return (List<?>) CatalogFunction.class.getMethod("getFunctionResources").invoke(function);
        } catch (NoSuchMethodException e) {
            return Collections.emptyList();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read the function's jars", e);
        }
    }

    /** A ResourceUri's address (the class arrived with `USING JAR` in 1.16). */
    static String resourceUri(Object resource) {
        try {
            return (String) resource.getClass().getMethod("getUri").invoke(resource);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read the function's jar", e);
        }
    }

    /**
     * A table environment whose user class loader is this one: set on the settings (1.16+), or the
     * thread's context class loader while the environment is created, which 1.15 takes instead.
     */
    static TableEnvironment create(EnvironmentSettings.Builder builder, boolean batch, ClassLoader loader) {
        boolean set;
        try {
            EnvironmentSettings.Builder.class.getMethod("withClassLoader", ClassLoader.class).invoke(builder, loader);
            set = true;
        } catch (NoSuchMethodException e) {
            set = false;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot set the class loader", e);
        }
        EnvironmentSettings settings = batch ? builder.inBatchMode().build() : builder.inStreamingMode().build();
        if (set) {
            return TableEnvironment.create(settings);
        }
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return TableEnvironment.create(settings);
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /** Removes one option by its key (Configuration.removeKey arrived in 1.17). */
    static void removeKey(Configuration config, String key) {
        config.removeConfig(ConfigOptions.key(key).stringType().noDefaultValue());
    }
}
