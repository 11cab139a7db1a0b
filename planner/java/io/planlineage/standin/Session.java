package io.planlineage.standin;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.internal.TableEnvironmentInternal;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.CatalogManager;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ContextResolvedTable;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.catalog.ResolvedCatalogBaseTable;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.factories.DynamicTableFactory;
import org.apache.flink.table.factories.Factory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.operations.ModifyOperation;
import org.apache.flink.table.operations.Operation;
import org.apache.flink.table.operations.QueryOperation;
import org.apache.flink.table.operations.StatementSetOperation;
import org.apache.flink.table.operations.command.ResetOperation;
import org.apache.flink.table.operations.command.SetOperation;
import org.apache.flink.table.operations.ddl.CreateTableOperation;

/**
 * One job's throwaway TableEnvironment. Statements go in one at a time, exactly as the user wrote
 * them; every sink they declare is collected so that the whole job compiles into one plan, like
 * the platform would submit it. Built here rather than driven call by call from Python because
 * each py4j round trip costs, and the same code must work unchanged on Flink 1.18 to 2.3.
 */
public final class Session {

    private final TableEnvironmentInternal tEnv;
    private final Set<String> forcedStandIns;
    private final List<ModifyOperation> sinks = new ArrayList<>();
    private final Map<String, String> originalConnectors = new LinkedHashMap<>();
    private final StandInFunctions functions;
    private final StandInCatalogs catalogs;
    private Throwable failure;
    /** Whether a statement may have added a jar (ADD JAR, CREATE FUNCTION ... USING JAR). */
    private boolean jarsAdded;

    /**
     * How many table factories each connector identifier has on the JVM's own class path. Jobs
     * whose class loader has no jar of its own see exactly these, so the service scan (milliseconds per table) runs once per
     * JVM instead of once per CREATE TABLE.
     */
    private static volatile Map<String, Integer> baseFactories;

    /**
     * @param batch runtime mode, fixed when the environment is created
     * @param config options the job SETs before its first statement
     * @param forcedStandIns connectors ("*": all) compiled through the stand-in even when their jar is
     *     present, because planning them touches external systems (filesystem lists paths)
     */
    public Session(boolean batch, Map<String, String> config, Set<String> forcedStandIns) {
        Configuration configuration = new Configuration();
        for (Map.Entry<String, String> entry : config.entrySet()) {
            configuration.setString(entry.getKey(), entry.getValue());
        }
        EnvironmentSettings.Builder builder = EnvironmentSettings.newInstance().withConfiguration(configuration);
        EnvironmentSettings settings = batch ? builder.inBatchMode().build() : builder.inStreamingMode().build();
        this.tEnv = (TableEnvironmentInternal) TableEnvironment.create(settings);
        this.forcedStandIns = forcedStandIns;
        this.functions = new StandInFunctions(tEnv, this::userClassLoader);
        this.catalogs = new StandInCatalogs(tEnv, this::userClassLoader);
    }

    /** How the script uses a function it may not have (see StandInFunctions). */
    public void hintFunction(String name, String kind, String type, List<String> fields) {
        functions.hint(name, kind, type, fields);
    }

    /**
     * What was stood in so far, as JSON: functions whose implementation is missing. (Tables whose
     * connector is missing are the stand-in connector's everyday work and the output names their
     * real connector, so they are not listed.)
     */
    public String standIns() {
        List<Object> all = new ArrayList<>(functions.used());
        all.addAll(catalogs.used());
        return Json.write(all);
    }

    /**
     * Before an INSERT into an undeclared table of a stand-in catalog: the table gets the columns
     * of the query feeding it (`columns`: the INSERT's column list, or null).
     */
    public void prepareInsert(String target, List<String> columns, String query) throws Exception {
        catalogs.prepareInsert(target, columns, query);
    }

    /** The schema a rules file gives a table of a catalog that may be stood in ("cat.db.t"). */
    public void declareSchema(String table, List<String> names, List<String> types) {
        catalogs.declare(table, names, types);
    }

    /**
     * Runs one statement the way a job submission would, except that queries, EXPLAIN and SHOW
     * are not executed and sinks are collected instead of submitted. Returns what it was.
     */
    public String execute(String statement) throws Exception {
        // Undeclared tables of stand-in catalogs learn the columns the statement reads.
        List<Operation> operations = catalogs.learning(statement, () -> {
            List<Operation> parsed = tEnv.getParser().parse(statement);
            catalogs.planIfLearning(parsed);
            return parsed;
        });
        String kind = "";
        for (Operation operation : operations) {
            kind = apply(operation);
        }
        return kind;
    }

    /**
     * Runs the statements in order, in one call (a py4j round trip per statement costs as much
     * as a small statement). Returns JSON {"kinds": [..], "sinks": [statement index per sink],
     * "failed": index | null}; the failing statement's error is kept for {@link #failure()}.
     */
    public String executeAll(List<String> statements) {
        List<Object> kinds = new ArrayList<>();
        List<Object> sinkStatements = new ArrayList<>();
        Integer failed = null;
        for (int index = 0; index < statements.size(); index++) {
            int before = sinks.size();
            try {
                kinds.add(execute(statements.get(index)));
            } catch (Throwable error) {
                failure = error;
                failed = index;
                break;
            }
            for (int i = before; i < sinks.size(); i++) {
                sinkStatements.add(index);
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("kinds", kinds);
        out.put("sinks", sinkStatements);
        out.put("failed", failed);
        return Json.write(out);
    }

    /** The error of the statement executeAll stopped at. */
    public Throwable failure() {
        return failure;
    }

    private String apply(Operation operation) throws Exception {
        String type = operation.getClass().getSimpleName();
        if (operation instanceof SetOperation) {
            SetOperation set = (SetOperation) operation;
            if (set.getKey().isPresent() && set.getValue().isPresent()) {
                tEnv.getConfig().set(set.getKey().get(), set.getValue().get());
            }
            return "set";
        }
        if (operation instanceof ResetOperation) {
            Optional<String> key = ((ResetOperation) operation).getKey();
            if (key.isPresent()) {
                tEnv.getConfig().getConfiguration().removeKey(key.get());
            }
            return "reset";
        }
        if (operation instanceof StatementSetOperation) {
            sinks.addAll(((StatementSetOperation) operation).getOperations());
            return "statement-set";
        }
        if (type.equals("CreateTableASOperation") || type.equals("ReplaceTableAsOperation")) {
            // Compiled as CREATE TABLE (schema from the query) plus INSERT: compilePlan refuses
            // CTAS on some versions, and the lineage is the same.
            Object create = call(operation, "getCreateTableOperation");
            if (type.equals("ReplaceTableAsOperation")) {
                ObjectIdentifier id = ((CreateTableOperation) create).getTableIdentifier();
                tEnv.getCatalogManager().getTable(id).ifPresent(t -> dropQuietly(id));
            }
            createTable((CreateTableOperation) create);
            Method toSink = operation.getClass().getMethod("toSinkModifyOperation", CatalogManager.class);
            sinks.add((ModifyOperation) toSink.invoke(operation, tEnv.getCatalogManager()));
            return "ctas";
        }
        if (operation instanceof ModifyOperation) {
            sinks.add((ModifyOperation) operation);
            return "insert";
        }
        if (operation instanceof CreateTableOperation) {
            createTable((CreateTableOperation) operation);
            return "create-table";
        }
        if (operation instanceof QueryOperation
                || type.startsWith("Show")
                || type.startsWith("Describe")
                || type.startsWith("Explain")
                || type.equals("BeginStatementSetOperation")
                || type.equals("EndStatementSetOperation")
                || type.equals("LoadModuleOperation")
                || type.equals("UnloadModuleOperation")) {
            return "skipped";
        }
        if (catalogs.intercept(operation)) {
            return "catalog";
        }
        if (functions.intercept(operation)) {
            return "function-stand-in";
        }
        if (type.equals("AddJarOperation") || type.contains("Function")) {
            jarsAdded = true;
        }
        tEnv.executeInternal(operation);
        return "ddl";
    }

    private void dropQuietly(ObjectIdentifier id) {
        tEnv.executeSql("DROP TABLE IF EXISTS " + id.asSerializableString());
    }

    /** Creates the table, through the stand-in when its connector cannot be planned for real. */
    private void createTable(CreateTableOperation create) throws Exception {
        ObjectIdentifier id = create.getTableIdentifier();
        CatalogBaseTable table = create.getCatalogTable();
        Map<String, String> options = new HashMap<>(table.getOptions());
        String connector = options.get(FactoryUtil.CONNECTOR.key());
        if (StandInTableFactory.IDENTIFIER.equals(connector)) {
            // LIKE of a table already swapped: keep what it inherited.
            connector = options.get(StandInTableFactory.ORIGINAL_CONNECTOR);
        } else {
            options.remove(StandInTableFactory.ORIGINAL_CONNECTOR);
            options.remove(StandInTableFactory.CHANGELOG_MODE);
        }
        if (connector == null) {
            // A table of a stood-in catalog's own format (Paimon, Iceberg...): no connector option.
            options.putAll(catalogs.ownFormatOptions(id.getCatalogName()));
        }
        if (connector != null) {
            originalConnectors.put(id.asSummaryString(), connector);
            if (forcedStandIns.contains("*") || forcedStandIns.contains(connector) || !factoryAvailable(connector)) {
                options.put(FactoryUtil.CONNECTOR.key(), StandInTableFactory.IDENTIFIER);
                options.put(StandInTableFactory.ORIGINAL_CONNECTOR, connector);
                options.put(StandInTableFactory.CHANGELOG_MODE, changelogMode(connector, options));
            }
        }
        Object copy = table.getClass().getMethod("copy", Map.class).invoke(table, options);
        Constructor<?> constructor = CreateTableOperation.class.getConstructors()[0];
        Operation swapped = (Operation) constructor.newInstance(id, copy, create.isIgnoreIfExists(), create.isTemporary());
        tEnv.executeInternal(swapped);
    }

    private static String changelogMode(String connector, Map<String, String> options) {
        if (connector.endsWith("-cdc")) {
            return "all";
        }
        if (connector.startsWith("upsert-")) {
            return "upsert";
        }
        for (String key : new String[] {"format", "value.format"}) {
            String format = options.getOrDefault(key, "").toLowerCase(Locale.ROOT);
            if (format.startsWith("debezium") || format.startsWith("canal") || format.startsWith("maxwell")
                    || format.startsWith("ogg")) {
                return "all";
            }
        }
        return "insert";
    }

    private boolean factoryAvailable(String connector) {
        if (!jarsAdded) {
            // No jar added: the session's loader sees the JVM's class path only.
            return baseFactoryCount(userClassLoader(), connector) == 1;
        }
        try {
            FactoryUtil.discoverFactory(userClassLoader(), DynamicTableFactory.class, connector);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** What FactoryUtil.discoverFactory would find for a connector (exactly one: available). */
    private static int baseFactoryCount(ClassLoader loader, String connector) {
        Map<String, Integer> known = baseFactories;
        if (known == null) {
            Map<String, Integer> found = new HashMap<>();
            java.util.Iterator<Factory> factories = ServiceLoader.load(Factory.class, loader).iterator();
            while (true) {
                try {
                    if (!factories.hasNext()) {
                        break;
                    }
                    Factory factory = factories.next();
                    if (factory instanceof DynamicTableFactory) {
                        found.merge(factory.factoryIdentifier(), 1, Integer::sum);
                    }
                } catch (ServiceConfigurationError | NoClassDefFoundError e) {
                    // A factory whose dependencies are missing cannot be used; Flink skips it too.
                }
            }
            known = found;
            baseFactories = known;
        }
        return known.getOrDefault(connector, 0);
    }

    /** The class loader that sees jars added with ADD JAR (a protected field on every version). */
    private ClassLoader userClassLoader() {
        try {
            Class<?> type = tEnv.getClass();
            while (type != null) {
                try {
                    Field field = type.getDeclaredField("resourceManager");
                    field.setAccessible(true);
                    Object manager = field.get(tEnv);
                    return (ClassLoader) manager.getClass().getMethod("getUserClassLoader").invoke(manager);
                } catch (NoSuchFieldException e) {
                    type = type.getSuperclass();
                }
            }
        } catch (ReflectiveOperationException e) {
            // fall through to the thread's loader
        }
        return Thread.currentThread().getContextClassLoader();
    }

    /** The number of sinks collected so far. */
    public int sinkCount() {
        return sinks.size();
    }

    /** Compiles every collected sink into one CompiledPlan, as the job would run. */
    public String compile() {
        return tEnv.compilePlan(sinks).asJsonString();
    }

    /** Compiles one collected sink alone: used to find which statement a failure belongs to. */
    public String compileOne(int index) {
        List<ModifyOperation> one = new ArrayList<>();
        one.add(sinks.get(index));
        return tEnv.compilePlan(one).asJsonString();
    }

    /** {@link #describeTable} of several tables in one call: a JSON object by identifier. */
    public String describeTables(List<String> serializedIdentifiers) {
        StringBuilder out = new StringBuilder("{");
        for (String identifier : serializedIdentifiers) {
            String described = describeTable(identifier);
            if (!described.equals("null")) {
                if (out.length() > 1) {
                    out.append(',');
                }
                out.append(Json.write(identifier)).append(':').append(described);
            }
        }
        return out.append('}').toString();
    }

    /**
     * What the catalog knows of a table, as JSON: the options the user wrote (connector restored),
     * whether it is temporary, and its columns. Temporary tables carry no options in the plan.
     */
    public String describeTable(String serializedIdentifier) {
        // Flink's own parser reads the plan's quoted identifier, so escaping rules stay Flink's.
        ObjectIdentifier id = tEnv.getCatalogManager()
                .qualifyIdentifier(tEnv.getParser().parseIdentifier(serializedIdentifier));
        Optional<ContextResolvedTable> found = tEnv.getCatalogManager().getTable(id);
        if (!found.isPresent()) {
            return "null";
        }
        ContextResolvedTable table = found.get();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("identifier", id.asSummaryString());
        out.put("temporary", table.isTemporary());
        ResolvedCatalogBaseTable<?> resolved = table.getResolvedTable();
        Map<String, String> options = new LinkedHashMap<>(resolved.getOptions());
        String original = options.remove(StandInTableFactory.ORIGINAL_CONNECTOR);
        options.remove(StandInTableFactory.CHANGELOG_MODE);
        if (original != null) {
            options.put(FactoryUtil.CONNECTOR.key(), original);
            out.put("stand_in", true);
        }
        out.put("options", options);
        out.put("kind", resolved instanceof ResolvedCatalogTable ? "table" : "view");
        List<Object> columns = new ArrayList<>();
        for (Column column : resolved.getResolvedSchema().getColumns()) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("name", column.getName());
            c.put("type", column.getDataType().getLogicalType().asSummaryString());
            c.put("kind", column instanceof Column.MetadataColumn ? "metadata"
                    : column instanceof Column.ComputedColumn ? "computed" : "physical");
            if (column instanceof Column.MetadataColumn) {
                Column.MetadataColumn metadata = (Column.MetadataColumn) column;
                c.put("metadata_key", metadata.getMetadataKey().orElse(metadata.getName()));
            }
            if (column instanceof Column.ComputedColumn) {
                c.put("expression", ((Column.ComputedColumn) column).getExpression().asSummaryString());
            }
            columns.add(c);
        }
        out.put("columns", columns);
        return Json.write(out);
    }

    private static Object call(Object target, String method) throws ReflectiveOperationException {
        return target.getClass().getMethod(method).invoke(target);
    }
}
