package io.planlineage.standin;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.flink.table.api.Schema;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.CatalogDatabase;
import org.apache.flink.table.catalog.CatalogDatabaseImpl;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.catalog.GenericInMemoryCatalog;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.catalog.exceptions.DatabaseAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.DatabaseNotExistException;
import org.apache.flink.table.catalog.exceptions.TableAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.TableNotExistException;
import org.apache.flink.table.factories.FactoryUtil;

/**
 * Stands in for a catalog the analyser cannot create (no factory for its type on the classpath,
 * or the real one could not reach its metastore/warehouse). It answers for every database and
 * table: a table the script never declares is created on first use with the columns the script
 * turns out to need (see StandInCatalogs), all through the stand-in connector. Its tables carry
 * the catalog's type and properties as options, so that their identity can be named from them.
 */
final class StandInCatalog extends GenericInMemoryCatalog {

    /** The catalog type the user wrote (paimon, iceberg, hive, jdbc, ...). */
    static final String CATALOG_TYPE = "planlineage.catalog-type";
    /** Prefix of the catalog's own properties, copied onto each of its tables. */
    static final String CATALOG_PROPERTY = "planlineage.catalog.";

    final String type;
    private final Map<String, String> properties;
    /** Tables the script uses without declaring them: column name -> SQL type, in order. */
    private final Map<ObjectPath, LinkedHashMap<String, String>> derived = new LinkedHashMap<>();
    /** Derived tables asked for since the last reset: the candidates for a missing column. */
    final Set<ObjectPath> touched = new LinkedHashSet<>();

    /** Schemas the rules file gives, by "catalog.database.table": an undeclared table starts with them. */
    private final Map<String, LinkedHashMap<String, String>> given;

    StandInCatalog(
            String name,
            String defaultDatabase,
            String type,
            Map<String, String> properties,
            Map<String, LinkedHashMap<String, String>> given) {
        super(name, defaultDatabase);
        this.type = type;
        this.properties = new LinkedHashMap<>(properties);
        this.given = given;
    }

    @Override
    public boolean databaseExists(String databaseName) {
        return true;
    }

    @Override
    public CatalogDatabase getDatabase(String databaseName) throws DatabaseNotExistException {
        ensureDatabase(databaseName);
        return super.getDatabase(databaseName);
    }

    private void ensureDatabase(String databaseName) {
        if (!super.listDatabases().contains(databaseName)) {
            try {
                createDatabase(databaseName, new CatalogDatabaseImpl(Collections.emptyMap(), null), true);
            } catch (DatabaseAlreadyExistException e) {
                // created meanwhile: fine
            }
        }
    }

    @Override
    public boolean tableExists(ObjectPath path) {
        return super.tableExists(path) || derived.containsKey(path);
    }

    @Override
    public CatalogBaseTable getTable(ObjectPath path) throws TableNotExistException {
        if (super.tableExists(path)) {
            return super.getTable(path);
        }
        derived.computeIfAbsent(path, p -> new LinkedHashMap<>(
                given.getOrDefault(getName() + "." + p.getFullName(), new LinkedHashMap<>())));
        touched.add(path);
        return build(path, derived.get(path));
    }

    /**
     * The table as of a point in time (`FOR SYSTEM_TIME AS OF TIMESTAMP ...`, Flink 1.18+): the
     * table as the script knows it, since which table a query reads does not depend on its
     * snapshot. Not an override on versions before 1.18, which have no time travel.
     */
    public CatalogBaseTable getTable(ObjectPath path, long timestamp) throws TableNotExistException {
        return getTable(path);
    }

    @Override
    public void createTable(ObjectPath path, CatalogBaseTable table, boolean ignoreIfExists)
            throws TableAlreadyExistException, DatabaseNotExistException {
        ensureDatabase(path.getDatabaseName());
        derived.remove(path);
        CatalogBaseTable stored = table;
        if (table instanceof CatalogTable && !table.getOptions().containsKey(FactoryUtil.CONNECTOR.key())) {
            // A table of the catalog's own format (no connector option): through the stand-in.
            Map<String, String> options = new LinkedHashMap<>(table.getOptions());
            options.putAll(standInOptions());
            stored = ((CatalogTable) table).copy(options);
        }
        super.createTable(path, stored, ignoreIfExists);
    }

    boolean isDerived(ObjectPath path) {
        return derived.containsKey(path) && !super.tableExists(path);
    }

    List<String> columns(ObjectPath path) {
        return new ArrayList<>(derived.getOrDefault(path, new LinkedHashMap<>()).keySet());
    }

    void addColumn(ObjectPath path, String name, String sqlType) {
        derived.computeIfAbsent(path, p -> new LinkedHashMap<>()).putIfAbsent(name, sqlType);
    }

    String columnType(ObjectPath path, String column) {
        return derived.getOrDefault(path, new LinkedHashMap<>()).get(column);
    }

    void setColumnType(ObjectPath path, String column, String sqlType) {
        derived.computeIfAbsent(path, p -> new LinkedHashMap<>()).put(column, sqlType);
    }

    void defineColumns(ObjectPath path, LinkedHashMap<String, String> columns) {
        derived.put(path, new LinkedHashMap<>(columns));
    }

    Map<ObjectPath, LinkedHashMap<String, String>> derivedTables() {
        return derived;
    }

    Map<String, String> standInOptions() {
        Map<String, String> options = new LinkedHashMap<>();
        options.put(FactoryUtil.CONNECTOR.key(), StandInTableFactory.IDENTIFIER);
        options.put(StandInTableFactory.ORIGINAL_CONNECTOR, type);
        options.put(CATALOG_TYPE, type);
        for (Map.Entry<String, String> property : properties.entrySet()) {
            if (!"type".equals(property.getKey())) {
                options.put(CATALOG_PROPERTY + property.getKey(), property.getValue());
            }
        }
        return options;
    }

    private CatalogTable build(ObjectPath path, LinkedHashMap<String, String> columns) {
        Schema.Builder schema = Schema.newBuilder();
        for (Map.Entry<String, String> column : columns.entrySet()) {
            schema.column(column.getKey(), column.getValue());
        }
        return table(schema.build(), standInOptions());
    }

    /** CatalogTable.of on 1.x, CatalogTable.newBuilder() on 2.x (the stand-in compiles against both). */
    static CatalogTable table(Schema schema, Map<String, String> options) {
        try {
            try {
                Method of = CatalogTable.class.getMethod("of", Schema.class, String.class, List.class, Map.class);
                return (CatalogTable) of.invoke(null, schema, null, Collections.emptyList(), options);
            } catch (NoSuchMethodException e) {
                Object builder = CatalogTable.class.getMethod("newBuilder").invoke(null);
                builder.getClass().getMethod("schema", Schema.class).invoke(builder, schema);
                builder.getClass().getMethod("options", Map.class).invoke(builder, options);
                return (CatalogTable) builder.getClass().getMethod("build").invoke(builder);
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot build a stand-in catalog table", e);
        }
    }
}
