package io.planlineage.standin;

import org.apache.flink.table.api.internal.TableEnvironmentInternal;
import org.apache.flink.table.catalog.CatalogManager;
import org.apache.flink.table.catalog.GenericInMemoryCatalog;

/**
 * Flink's default in-memory catalog without managed tables (Flink 1.x; 2.0 removed them).
 *
 * <p>On a catalog that supports managed tables, Flink 1.x asks at every CREATE TABLE whether the
 * table is a legacy connector's, which looks up legacy table factories (a warm job's time in the
 * JVM over its bare compile, 200 corpus jobs on 1.20: 1.22-1.23x with that question, 1.17-1.18x
 * without it). A managed table is one without a connector option
 * and needs a ManagedTableFactory, which no connector for Flink 1.18 to 1.20 provides; such a
 * table fails to compile either way (at its INSERT here, as on Flink 2.x, rather than at its
 * CREATE), so no job that Flink plans is planned differently.
 */
final class DefaultCatalog extends GenericInMemoryCatalog {

    DefaultCatalog(String name, String defaultDatabase) {
        super(name, defaultDatabase);
    }

    /** Overrides Catalog#supportsManagedTable where it exists (Flink 1.x); unused on 2.x. */
    public boolean supportsManagedTable() {
        return false;
    }

    /**
     * Puts one in place of a new environment's default catalog, under the same name and with the
     * same default database (on versions that have managed tables; elsewhere Flink's stays).
     * The current catalog cannot be dropped, so another is current meanwhile.
     */
    static void install(TableEnvironmentInternal tEnv) {
        if (!MANAGED_TABLES) {
            return;
        }
        CatalogManager catalogs = tEnv.getCatalogManager();
        String name = tEnv.getCurrentCatalog();
        String database = tEnv.getCurrentDatabase();
        String meanwhile = name + "_planlineage_swap";
        catalogs.registerCatalog(meanwhile, new DefaultCatalog(meanwhile, database));
        catalogs.setCurrentCatalog(meanwhile);
        catalogs.unregisterCatalog(name, false);
        catalogs.registerCatalog(name, new DefaultCatalog(name, database));
        catalogs.setCurrentCatalog(name);
        catalogs.unregisterCatalog(meanwhile, false);
    }

    private static final boolean MANAGED_TABLES = managedTablesExist();

    /** Whether this version's catalogs still have managed tables (the method exists: 1.x). */
    private static boolean managedTablesExist() {
        try {
            GenericInMemoryCatalog.class.getMethod("supportsManagedTable");
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }
}
