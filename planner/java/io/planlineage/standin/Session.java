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
 * One job on a TableEnvironment of its own (new, or reset as fresh: see Environment). Statements go in one at a time, exactly as the user wrote
 * them; every sink they declare is collected so that the whole job compiles into one plan, like
 * the platform would submit it. Driven by {@link Jobs} inside the JVM, one request per job; the
 * same code serves every supported version (Versions.java bridges their differences).
 */
public final class Session {

    private final Environment environment;
    private final TableEnvironmentInternal tEnv;
    private final Set<String> forcedStandIns;
    private final List<ModifyOperation> sinks = new ArrayList<>();
    private final Map<String, String> originalConnectors = new LinkedHashMap<>();
    private final StandInFunctions functions;
    private final StandInCatalogs catalogs;
    private final StandInViews views;
    /** The stand-ins' types when each sink of `sinks` was converted (StandInFunctions#types). */
    private final List<String> sinkTypes = new ArrayList<>();
    /** False once a statement did what Environment.reset does not undo. */
    private boolean reusable = true;
    /** Whether a statement may have added a jar (ADD JAR, CREATE FUNCTION ... USING JAR). */
    private boolean jarsAdded;

    /**
     * How many table factories each connector identifier has on the JVM's own class path. Jobs
     * whose class loader has no jar of its own see exactly these, so the service scan (milliseconds per table) runs once per
     * JVM instead of once per CREATE TABLE.
     */
    private static volatile Map<String, Integer> baseFactories;

    /**
     * @param environment a new environment, or one a previous job's reset left as fresh
     * @param forcedStandIns connectors ("*": all) compiled through the stand-in even when their jar is
     *     present, because planning them touches external systems (filesystem lists paths)
     */
    Session(Environment environment, Set<String> forcedStandIns) {
        this.environment = environment;
        this.tEnv = environment.tEnv;
        this.forcedStandIns = forcedStandIns;
        this.functions = new StandInFunctions(tEnv, this::userClassLoader);
        this.catalogs = new StandInCatalogs(tEnv, this::userClassLoader);
        this.views = new StandInViews(tEnv, functions);
    }

    Environment environment() {
        return environment;
    }

    /** Whether Environment.reset undoes everything this job's statements did (see Environment). */
    boolean reusable() {
        return reusable;
    }

    /** How the script uses a function it may not have (see StandInFunctions). */
    void hintFunction(String name, String kind, String type, List<String> fields) {
        functions.hint(name, kind, type, fields);
    }

    /**
     * What was stood in so far: functions whose implementation is missing, catalogs whose type is.
     * (Tables whose connector is missing are the stand-in connector's everyday work and the
     * output names their real connector, so they are not listed.)
     */
    List<Object> standInList() {
        List<Object> all = new ArrayList<>(functions.used());
        all.addAll(catalogs.used());
        return all;
    }

    /**
     * Before an INSERT into an undeclared table of a stand-in catalog: the table gets the columns
     * of the query feeding it (`columns`: the INSERT's column list, or null).
     */
    void prepareInsert(String target, List<String> columns, String query) throws Exception {
        catalogs.prepareInsert(target, columns, query);
    }

    /** The schema a rules file gives a table of a catalog that may be stood in ("cat.db.t"). */
    void declareSchema(String table, List<String> names, List<String> types) {
        catalogs.declare(table, names, types);
    }

    /**
     * Runs one statement the way a job submission would, except that queries, EXPLAIN and SHOW
     * are not executed and sinks are collected instead of submitted. Returns what it was.
     */
    String execute(String statement) throws Exception {
        List<Operation> operations = parse(statement);
        String kind = apply(operations);
        views.created(statement, operations);
        return kind;
    }

    /** A statement's operations, parsed and converted in this job's environment; nothing is run yet. */
    List<Operation> parse(String statement) throws Exception {
        // Undeclared tables of stand-in catalogs learn the columns the statement reads; stand-in
        // functions, the types its rejected uses of them need.
        return functions.learning(() -> catalogs.learning(statement, () -> {
            views.refresh();
            List<Operation> parsed = tEnv.getParser().parse(statement);
            catalogs.planIfLearning(parsed);
            return parsed;
        }));
    }

    /**
     * Runs a statement's operations, converted here by {@link #parse} or, for the job's leading
     * tables, by {@link ParallelDeclarations}; returns what the statement was.
     */
    String apply(List<Operation> operations) throws Exception {
        String kind = "";
        for (Operation operation : operations) {
            kind = applyOne(operation);
        }
        String types = functions.types();
        while (sinkTypes.size() < sinks.size()) {
            sinkTypes.add(types);
        }
        return kind;
    }

    private String applyOne(Operation operation) throws Exception {
        String type = operation.getClass().getSimpleName();
        if (operation instanceof SetOperation) {
            if (applySet(tEnv, (SetOperation) operation)) {
                // compilePlan copies the options into the executor's configuration too, where
                // no reset reaches: the next job gets a new environment.
                reusable = false;
            }
            return "set";
        }
        if (operation instanceof ResetOperation) {
            Optional<String> key = ((ResetOperation) operation).getKey();
            if (key.isPresent()) {
                Versions.removeKey(tEnv.getConfig().getConfiguration(), key.get());
            }
            reusable = false;
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
            reusable = false;
            return "catalog";
        }
        if (functions.intercept(operation)) {
            reusable = false;
            return "function-stand-in";
        }
        if (type.equals("AddJarOperation") || type.contains("Function")) {
            jarsAdded = true;
        }
        if (!type.equals("CreateViewOperation") || !viewInDefaultNamespace(operation)) {
            reusable = false; // catalogs, databases, functions, jars, USE, ALTER...: a new environment next
        }
        tEnv.executeInternal(operation);
        return "ddl";
    }

    /** Sets the option a SET names (true), or does nothing for a SET that only lists them (false). */
    static boolean applySet(TableEnvironmentInternal tEnv, SetOperation set) {
        if (!set.getKey().isPresent() || !set.getValue().isPresent()) {
            return false;
        }
        tEnv.getConfig().set(set.getKey().get(), set.getValue().get());
        return true;
    }

    private boolean inDefaultNamespace(ObjectIdentifier id) {
        return environment.isDefaultNamespace(id.getCatalogName(), id.getDatabaseName());
    }

    private boolean viewInDefaultNamespace(Operation view) {
        try {
            return inDefaultNamespace((ObjectIdentifier) call(view, "getViewIdentifier"));
        } catch (ReflectiveOperationException | ClassCastException e) {
            return false; // unknown: not reused
        }
    }

    private void dropQuietly(ObjectIdentifier id) {
        tEnv.executeSql("DROP TABLE IF EXISTS " + id.asSerializableString());
    }

    /** Creates the table, through the stand-in when its connector cannot be planned for real. */
    private void createTable(CreateTableOperation create) throws Exception {
        ObjectIdentifier id = create.getTableIdentifier();
        if (!inDefaultNamespace(id)) {
            reusable = false;
        }
        CatalogBaseTable table = create.getCatalogTable();
        Map<String, String> options = new HashMap<>(table.getOptions());
        String connector = options.get(FactoryUtil.CONNECTOR.key());
        if (StandInTableFactory.IDENTIFIER.equals(connector)) {
            // LIKE of a table already swapped: keep what it inherited.
            connector = options.get(StandInTableFactory.ORIGINAL_CONNECTOR);
        } else {
            options.remove(StandInTableFactory.ORIGINAL_CONNECTOR);
            options.remove(StandInTableFactory.CHANGELOG_MODE);
            options.remove(StandInTableFactory.SINK_CHANGES);
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
                if (forcedStandIns.contains("*")) { // a batch job planned in streaming mode
                    options.put(StandInTableFactory.SINK_CHANGES, "any");
                }
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
                    try { // 1.15: no resource manager, the loader the environment was created with
                        Field field = type.getDeclaredField("userClassLoader");
                        field.setAccessible(true);
                        return (ClassLoader) field.get(tEnv);
                    } catch (NoSuchFieldException notHere) {
                        type = type.getSuperclass();
                    }
                }
            }
        } catch (ReflectiveOperationException e) {
            // fall through to the thread's loader
        }
        return Thread.currentThread().getContextClassLoader();
    }

    /**
     * The job's plan was refused at the sinks [from, from + count), which one statement declared:
     * the statement is parsed again with its sinks planned as part of it, so that stand-in
     * functions take the types the refusal points to (see StandInFunctions#learning), and its
     * sinks are replaced by the new ones. False when no stand-in's type changed since the sinks
     * were converted (a type learnt for an earlier statement's sinks may fit these too: two INSERTs
     * of the same function's result into one sink column).
     */
    boolean relearnSinks(String statement, int from, int count) {
        if (functions.used().isEmpty()) {
            return false; // no stand-in function: the refusal is the statement's own
        }
        String before = sinkTypes.get(from);
        List<ModifyOperation> replaced;
        try {
            replaced = functions.learning(() -> {
                List<ModifyOperation> found = new ArrayList<>();
                views.refresh();
                for (Operation operation : catalogs.learning(statement, () -> tEnv.getParser().parse(statement))) {
                    if (operation instanceof StatementSetOperation) {
                        found.addAll(((StatementSetOperation) operation).getOperations());
                    } else if (operation instanceof ModifyOperation) {
                        found.add((ModifyOperation) operation);
                    }
                }
                for (ModifyOperation sink : found) {
                    // one at a time, so that a type that fits one sink counts as getting further
                    List<ModifyOperation> one = new ArrayList<>();
                    one.add(sink);
                    tEnv.compilePlan(one);
                    functions.passed();
                }
                return found;
            });
        } catch (Exception e) {
            return false;
        }
        if (before.equals(functions.types()) || replaced.size() != count) {
            return false;
        }
        String types = functions.types();
        for (int i = 0; i < count; i++) {
            sinks.set(from + i, replaced.get(i));
            sinkTypes.set(from + i, types);
        }
        return true;
    }

    /**
     * What a refusal adds when it may be a stand-in's limit rather than the script's: a stand-in
     * class in its message (a catalog or connector stand-in lacks what the real one has), or
     * stand-in functions the statement calls whose types nothing fitted. It names what was stood
     * in and that the real jar gives the real behaviour; "" otherwise.
     */
    String standInHint(String message) {
        List<String> named = new ArrayList<>();
        if (message.contains(STAND_IN_PACKAGE)) {
            for (Map<String, Object> record : catalogs.used()) {
                if ("catalog".equals(record.get("kind"))) {
                    named.add("catalog " + record.get("name") + " (type " + record.get("catalog_type") + ")");
                }
            }
            if (named.isEmpty()) {
                named.add(message.contains("StandInCatalog") ? "a catalog" : "a connector without its jar");
            }
        }
        for (Map<String, Object> record : functions.suspected()) {
            named.add("function " + record.get("name") + " (" + record.get("reason") + "; typed from its use)");
        }
        if (named.isEmpty()) {
            return "";
        }
        return " This may be a limit of the stand-ins, not of the script: " + String.join(", ", named)
                + (named.size() == 1 ? " is" : " are") + " stood in because no jar given provides "
                + (named.size() == 1 ? "it" : "them")
                + "; pass the real jar with --jar (or the cluster's --flink-home) for the real behaviour.";
    }

    /**
     * How a message names a stand-in class (StandInCatalog, StandInSource, ...): it comes from inside
     * a stand-in. (DefaultCatalog, which only drops managed tables from Flink's own default catalog,
     * is no stand-in: what it refuses, Flink's catalog refuses too.)
     */
    static final String STAND_IN_PACKAGE = "io.planlineage.standin.StandIn";

    /** Whether the last statement's failure may come from a stand-in catalog's guesses (see StandInCatalogs). */
    boolean mayBlameGuesses() {
        return catalogs.mayBlameGuesses();
    }

    /** The job's jars are in its environment's class loader (1.15: no ADD JAR); not reused. */
    void jarsInClassLoader() {
        jarsAdded = true;
        reusable = false;
    }

    /** The number of sinks collected so far. */
    int sinkCount() {
        return sinks.size();
    }

    /** Compiles every collected sink into one CompiledPlan, as the job would run. */
    String compile() {
        return tEnv.compilePlan(sinks).asJsonString();
    }

    /** Compiles one collected sink alone: used to find which statement a failure belongs to. */
    String compileOne(int index) {
        List<ModifyOperation> one = new ArrayList<>();
        one.add(sinks.get(index));
        return tEnv.compilePlan(one).asJsonString();
    }

    /**
     * What the catalog knows of a table (null: nothing): its identifier, the options the user wrote
     * (connector restored), whether it is temporary, and its columns. Temporary tables carry no
     * options in the plan.
     */
    Map<String, Object> describe(String serializedIdentifier) {
        ObjectIdentifier id = serializedIdentifier(serializedIdentifier);
        if (id == null) {
            // Not in ObjectIdentifier's serialized form: Flink's own parser reads it.
            id = tEnv.getCatalogManager().qualifyIdentifier(tEnv.getParser().parseIdentifier(serializedIdentifier));
        }
        Optional<ContextResolvedTable> found = tEnv.getCatalogManager().getTable(id);
        if (!found.isPresent()) {
            return null;
        }
        ContextResolvedTable table = found.get();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("identifier", id.asSummaryString());
        out.put("temporary", table.isTemporary());
        ResolvedCatalogBaseTable<?> resolved = table.getResolvedTable();
        Map<String, String> options = new LinkedHashMap<>(resolved.getOptions());
        String original = options.remove(StandInTableFactory.ORIGINAL_CONNECTOR);
        options.remove(StandInTableFactory.CHANGELOG_MODE);
        options.remove(StandInTableFactory.SINK_CHANGES);
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
        return out;
    }

    /**
     * The identifier a plan names a table by, read back from ObjectIdentifier#asSerializableString
     * (three parts, each in backticks, a backtick in a name doubled); null for any other form.
     * Exact and far cheaper than a SQL parser made for each table of each job.
     */
    static ObjectIdentifier serializedIdentifier(String text) {
        List<String> parts = new ArrayList<>();
        int at = 0;
        while (at < text.length()) {
            if (text.charAt(at) != '`') {
                return null;
            }
            StringBuilder part = new StringBuilder();
            int i = at + 1;
            while (true) {
                int quote = text.indexOf('`', i);
                if (quote < 0) {
                    return null;
                }
                part.append(text, i, quote);
                if (quote + 1 < text.length() && text.charAt(quote + 1) == '`') {
                    part.append('`');
                    i = quote + 2;
                    continue;
                }
                at = quote + 1;
                break;
            }
            parts.add(part.toString());
            if (at < text.length()) {
                if (text.charAt(at) != '.') {
                    return null;
                }
                at++;
                if (at == text.length()) {
                    return null;
                }
            }
        }
        return parts.size() == 3 ? ObjectIdentifier.of(parts.get(0), parts.get(1), parts.get(2)) : null;
    }

    private static Object call(Object target, String method) throws ReflectiveOperationException {
        return target.getClass().getMethod(method).invoke(target);
    }
}
