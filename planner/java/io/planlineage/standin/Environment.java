package io.planlineage.standin;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.internal.TableEnvironmentInternal;
import org.apache.flink.table.catalog.Catalog;
import org.apache.flink.table.catalog.ObjectPath;

/**
 * A TableEnvironment for one job at a time. Making one costs about a tenth of a small job's
 * compile, so an environment whose job only declared tables and views in the default catalog and
 * compiled INSERTs is reset and serves the next job with the same settings; any other statement
 * (SET and RESET: compilePlan copies options into the executor's configuration; catalogs,
 * databases, functions, jars, USE...) retires it. A reset environment
 * is reused only when it is then observably as fresh as a new one: no catalog, database, table,
 * view or function but the defaults, the same modules, the same current namespace and exactly its
 * first configuration. Anything a job did that reset cannot prove undone makes a new one.
 */
final class Environment {

    final TableEnvironmentInternal tEnv;
    private final Map<String, String> firstConfig;
    private final String catalog;
    private final String database;
    private final List<String> modules;

    private Environment(TableEnvironmentInternal tEnv) {
        this.tEnv = tEnv;
        this.firstConfig = tEnv.getConfig().getConfiguration().toMap();
        this.catalog = tEnv.getCurrentCatalog();
        this.database = tEnv.getCurrentDatabase();
        this.modules = Arrays.asList(tEnv.listModules());
    }

    /**
     * @param batch runtime mode, fixed when the environment is created
     * @param config options the job SETs before its first statement
     */
    static Environment create(boolean batch, Map<String, String> config) {
        return create(batch, config, ServiceFiles.OF_CLASS_PATH);
    }

    /** @param loader the user class loader (1.15: with the job's jars, which it cannot ADD) */
    static Environment create(boolean batch, Map<String, String> config, ClassLoader loader) {
        Configuration configuration = new Configuration();
        for (Map.Entry<String, String> entry : config.entrySet()) {
            configuration.setString(entry.getKey(), entry.getValue());
        }
        EnvironmentSettings.Builder builder = EnvironmentSettings.newInstance()
                .withConfiguration(configuration);
        TableEnvironmentInternal tEnv =
                (TableEnvironmentInternal) Versions.create(builder, batch, loader);
        DefaultCatalog.install(tEnv);
        return new Environment(tEnv);
    }

    /** Whether an object lives where reset looks: the default catalog and database. */
    boolean isDefaultNamespace(String objectCatalog, String objectDatabase) {
        return catalog.equals(objectCatalog) && database.equals(objectDatabase);
    }

    /**
     * Drops what a job declared and restores the first configuration (compilePlan adds its query
     * start time and namespace to it); true when the environment is then as fresh as a new one
     * (false: do not reuse it).
     */
    boolean reset() {
        try {
            Configuration config = tEnv.getConfig().getConfiguration();
            for (String key : new ArrayList<>(config.keySet())) {
                if (!firstConfig.containsKey(key)) {
                    Versions.removeKey(config, key);
                }
            }
            for (Map.Entry<String, String> entry : firstConfig.entrySet()) {
                config.setString(entry.getKey(), entry.getValue());
            }
            for (String view : tEnv.listTemporaryViews()) {
                tEnv.dropTemporaryView(quoted(view));
            }
            for (String table : tEnv.listTemporaryTables()) {
                tEnv.dropTemporaryTable(quoted(table));
            }
            Optional<Catalog> defaults = tEnv.getCatalog(catalog);
            if (!defaults.isPresent()) {
                return false;
            }
            for (String table : defaults.get().listTables(database)) { // views included
                defaults.get().dropTable(new ObjectPath(database, table), true);
            }
            return fresh(defaults.get());
        } catch (Throwable error) {
            return false;
        }
    }

    private boolean fresh(Catalog defaults) throws Exception {
        return Arrays.asList(tEnv.listCatalogs()).equals(List.of(catalog))
                && catalog.equals(tEnv.getCurrentCatalog())
                && database.equals(tEnv.getCurrentDatabase())
                && defaults.listDatabases().equals(List.of(database))
                && defaults.listTables(database).isEmpty()
                && defaults.listFunctions(database).isEmpty()
                && tEnv.listTables().length == 0
                && tEnv.listTemporaryTables().length == 0
                && tEnv.listTemporaryViews().length == 0
                && tEnv.listUserDefinedFunctions().length == 0
                && Arrays.asList(tEnv.listModules()).equals(modules)
                && tEnv.getConfig().getConfiguration().toMap().equals(firstConfig);
    }

    private static String quoted(String name) {
        return "`" + name.replace("`", "``") + "`";
    }
}
