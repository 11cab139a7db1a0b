package io.planlineage.standin;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.table.api.internal.TableEnvironmentInternal;
import org.apache.flink.table.catalog.Catalog;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.factories.CatalogFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.operations.ModifyOperation;
import org.apache.flink.table.operations.Operation;
import org.apache.flink.table.operations.StatementSetOperation;
import org.apache.flink.table.operations.ddl.CreateCatalogOperation;

/**
 * Creates stand-in catalogs for catalogs the analyser cannot create, and learns the columns of
 * their undeclared tables from the planner itself: a statement is validated, and every "Column
 * 'x' not found" names a column the script reads, which the table then gets (STRING, the
 * documented default), until the statement validates. A sink's columns are those of the query
 * feeding it. The tables a statement reads and writes never depend on these guesses.
 */
final class StandInCatalogs {

    /** Enough for wide tables; each round adds one column. */
    private static final int MAX_LEARNED = 400;
    static final String DEFAULT_TYPE = "STRING";
    private static final Pattern IN_TABLE = Pattern.compile("Column '([^']+)' not found in table '([^']+)'");
    private static final Pattern IN_ANY = Pattern.compile("Column '([^']+)' not found in any table");
    /** A join key learnt as STRING against a typed key: Flink refuses the implicit cast. */
    /** A learnt (STRING) column landing in a typed sink column. */
    private static final Pattern SINK_TYPES = Pattern.compile(
            "(?s)sink for '([^']+)' do not match.*?Incompatible types for sink column '([^']+)'.*?Query schema:\\s*\\[(.*?)\\]\\s*Sink schema:\\s*\\[(.*?)\\]");
    private static final Pattern JOIN_TYPES = Pattern.compile(
            "implicit type conversion between (.+?) and (.+?) is not supported on join");

    private final TableEnvironmentInternal tEnv;
    private final Supplier<ClassLoader> classLoader;
    private final Map<String, StandInCatalog> catalogs = new LinkedHashMap<>();
    private final List<Map<String, Object>> used = new ArrayList<>();
    /** The last statement was refused a column of a table the script declares (see mayBlameGuesses). */
    private boolean declaredRefused;
    /** Schemas from the rules file, by "catalog.database.table". */
    private final Map<String, LinkedHashMap<String, String>> declared = new LinkedHashMap<>();

    StandInCatalogs(TableEnvironmentInternal tEnv, Supplier<ClassLoader> classLoader) {
        this.tEnv = tEnv;
        this.classLoader = classLoader;
    }

    void declare(String table, List<String> names, List<String> types) {
        LinkedHashMap<String, String> columns = new LinkedHashMap<>();
        for (int i = 0; i < names.size() && i < types.size(); i++) {
            columns.put(names.get(i), types.get(i));
        }
        declared.put(table, columns);
    }

    /** Catalogs and derived tables stood in, for the document's `stand_ins`. */
    List<Map<String, Object>> used() {
        List<Map<String, Object>> all = new ArrayList<>(used);
        for (StandInCatalog catalog : catalogs.values()) {
            for (Map.Entry<ObjectPath, LinkedHashMap<String, String>> table : catalog.derivedTables().entrySet()) {
                if (!catalog.isDerived(table.getKey())) {
                    continue;
                }
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("kind", "table");
                record.put("name", catalog.getName() + "." + table.getKey().getFullName());
                record.put("catalog_type", catalog.type);
                String full = catalog.getName() + "." + table.getKey().getFullName();
                record.put("reason", declared.containsKey(full)
                        ? "not declared in the script; columns from the rules file: "
                                + String.join(", ", table.getValue().keySet())
                        : "not declared in the script; columns derived from its use: "
                                + (table.getValue().isEmpty() ? "none" : String.join(", ", table.getValue().keySet())));
                all.add(record);
            }
        }
        return all;
    }

    /** Registers a stand-in instead of creating the catalog; false when the real one was created. */
    boolean intercept(Operation operation) throws Exception {
        if (!(operation instanceof CreateCatalogOperation)) {
            return false;
        }
        CreateCatalogOperation create = (CreateCatalogOperation) operation;
        Map<String, String> properties = create.getProperties();
        String type = properties.getOrDefault("type", "");
        String reason;
        if (factoryAvailable(type)) {
            try {
                tEnv.executeInternal(operation);
                return true;
            } catch (RuntimeException e) {
                // The real catalog could not be created here (metastore or warehouse unreachable).
                reason = "its factory could not create it here: " + firstLine(e);
            }
        } else {
            reason = "no factory for catalog type '" + type + "' on the classpath";
        }
        String name = create.getCatalogName();
        String database = properties.getOrDefault("default-database", "default");
        StandInCatalog catalog = new StandInCatalog(name, database, type, properties, declared);
        tEnv.getCatalogManager().registerCatalog(name, catalog);
        catalogs.put(name, catalog);
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("kind", "catalog");
        record.put("name", name);
        record.put("catalog_type", type);
        record.put("reason", reason);
        used.add(record);
        return true;
    }

    /** The stand-in options of a stood-in catalog's own tables; empty for any other catalog. */
    Map<String, String> ownFormatOptions(String catalogName) {
        StandInCatalog catalog = catalogs.get(catalogName);
        return catalog == null ? new LinkedHashMap<>() : catalog.standInOptions();
    }

    private boolean factoryAvailable(String type) {
        try {
            FactoryUtil.discoverFactory(classLoader.get(), CatalogFactory.class, type);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static String firstLine(Throwable error) {
        String message = String.valueOf(error.getMessage());
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    /**
     * Gives an undeclared sink of a stand-in catalog the columns of the query that feeds it
     * (named by the INSERT's column list when it has one), before the INSERT is validated.
     */
    void prepareInsert(String target, List<String> columnList, String query) throws Exception {
        if (catalogs.isEmpty()) {
            return;
        }
        ObjectIdentifier id = tEnv.getCatalogManager().qualifyIdentifier(tEnv.getParser().parseIdentifier(target));
        StandInCatalog catalog = catalogs.get(id.getCatalogName());
        ObjectPath path = id.toObjectPath();
        if (catalog == null || catalog.tableExists(path) && !catalog.isDerived(path) || temporary(id)) {
            return; // a real table, or a temporary one the script declared under the catalog's name
        }
        if (catalog.isDerived(path) && !catalog.columns(path).isEmpty()) {
            return; // already read by an earlier statement: its columns stand
        }
        ResolvedSchema schema = learning(query, () -> tEnv.sqlQuery(query).getResolvedSchema());
        LinkedHashMap<String, String> columns = new LinkedHashMap<>();
        List<Column> queryColumns = schema.getColumns();
        for (int i = 0; i < queryColumns.size(); i++) {
            String name = columnList != null && columnList.size() == queryColumns.size()
                    ? columnList.get(i) : queryColumns.get(i).getName();
            columns.put(name, sqlType(queryColumns.get(i)));
        }
        catalog.defineColumns(path, columns);
    }

    /** Whether a temporary table has this name (read reflectively: not every version's API says it alike). */
    private boolean temporary(ObjectIdentifier id) {
        try {
            Object manager = tEnv.getCatalogManager();
            return (Boolean) manager.getClass().getMethod("isTemporaryTable", ObjectIdentifier.class).invoke(manager, id);
        } catch (ReflectiveOperationException | ClassCastException e) {
            return false;
        }
    }

    private static String sqlType(Column column) {
        try {
            return column.getDataType().getLogicalType().asSerializableString();
        } catch (RuntimeException e) {
            return DEFAULT_TYPE; // RAW and other types without a SQL spelling
        }
    }

    /** Runs an action, adding to stand-in tables every column the planner says is missing. */
    <T> T learning(String statement, Callable<T> action) throws Exception {
        declaredRefused = false;
        for (int learned = 0; ; learned++) {
            for (StandInCatalog catalog : catalogs.values()) {
                catalog.touched.clear();
            }
            try {
                return action.call();
            } catch (Exception e) {
                if (catalogs.isEmpty() || learned >= MAX_LEARNED || !learn(e, statement)) {
                    throw e;
                }
            }
        }
    }

    /**
     * Plans the sinks of a statement that used an undeclared table, so that refusals which come
     * only from the optimizer (join key types) are learnt from too while the statement can still
     * be parsed again; the statement's operations are then kept as parsed.
     */
    void planIfLearning(List<Operation> operations) {
        boolean derived = false;
        for (StandInCatalog catalog : catalogs.values()) {
            for (ObjectPath path : catalog.touched) {
                derived |= catalog.isDerived(path);
            }
        }
        if (!derived) {
            return;
        }
        List<ModifyOperation> sinks = new ArrayList<>();
        for (Operation operation : operations) {
            if (operation instanceof StatementSetOperation) {
                sinks.addAll(((StatementSetOperation) operation).getOperations());
            } else if (operation instanceof ModifyOperation) {
                sinks.add((ModifyOperation) operation);
            }
        }
        if (!sinks.isEmpty()) {
            tEnv.compilePlan(sinks);
        }
    }

    /**
     * Whether `alias` names, in the statement, a table that exists and is not one whose columns
     * are guessed: a table the script declares (or a real catalog's).
     */
    private boolean declaredTableNamed(String statement, String alias) {
        Matcher named = Pattern.compile("(?i)(?:\\bFROM|\\bJOIN|,)\\s+((?:`[^`]+`|[\\w$]+)(?:\\s*\\.\\s*(?:`[^`]+`|[\\w$]+)){0,2})"
                + "(?:\\s+(?:AS\\s+)?`?" + Pattern.quote(alias) + "`?)?(?![\\w$.`])").matcher(statement);
        while (named.find()) {
            String table = named.group(1);
            boolean bare = named.group().trim().endsWith(table);
            String last = table.replace("`", "").replaceAll(".*\\.", "").trim();
            if (bare && !last.equalsIgnoreCase(alias)) {
                continue; // a table without an alias, of another name
            }
            try {
                ObjectIdentifier id = tEnv.getCatalogManager().qualifyIdentifier(tEnv.getParser().parseIdentifier(table));
                StandInCatalog catalog = catalogs.get(id.getCatalogName());
                if (catalog != null ? !catalog.isDerived(id.toObjectPath()) && catalog.tableExists(id.toObjectPath())
                        : tEnv.getCatalogManager().getTable(id).isPresent()) {
                    return true;
                }
            } catch (RuntimeException e) {
                // not a table name: nothing to say
            }
        }
        return false;
    }

    private boolean learn(Throwable error, String statement) {
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            String message = String.valueOf(cause.getMessage());
            Matcher inTable = IN_TABLE.matcher(message);
            if (inTable.find()) {
                return add(inTable.group(1), inTable.group(2), statement);
            }
            Matcher inAny = IN_ANY.matcher(message);
            if (inAny.find()) {
                return add(inAny.group(1), null, statement);
            }
            Matcher sink = SINK_TYPES.matcher(message);
            if (sink.find()) {
                List<String[]> query = fields(sink.group(3));
                List<String[]> target = fields(sink.group(4));
                for (int i = 0; i < target.size() && i < query.size(); i++) {
                    if (target.get(i)[0].equals(sink.group(2))) {
                        // an undeclared sink follows its query; a learnt source column follows its sink
                        return retypeSink(sink.group(1), target.get(i)[0], plain(query.get(i)[1]))
                                || retype(query.get(i)[0], plain(target.get(i)[1]));
                    }
                }
                return false;
            }
            Matcher join = JOIN_TYPES.matcher(message);
            if (join.find()) {
                String left = join.group(1).trim();
                String right = join.group(2).trim();
                String typed = left.startsWith("VARCHAR") ? right : right.startsWith("VARCHAR") ? left : null;
                return typed != null && retypeJoinKey(typed.replace(" NOT NULL", ""), statement);
            }
        }
        return false;
    }

    /**
     * Whether the statement's last run may have been refused for what was guessed of a stand-in
     * catalog's table: false when it used no undeclared table of one, or when its refusal is a
     * column missing from a table the script declares (its own error, as without a catalog).
     */
    boolean mayBlameGuesses() {
        if (declaredRefused) {
            return false;
        }
        for (StandInCatalog catalog : catalogs.values()) {
            for (ObjectPath path : catalog.touched) {
                if (catalog.isDerived(path)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Adds the column to the derived table the alias names (else the only, else the first, one used). */
    private boolean add(String column, String alias, String statement) {
        if (alias != null && declaredTableNamed(statement, alias)) {
            declaredRefused = true;
            return false; // `alias.column` of a table the script declares: its own error
        }
        List<Object[]> candidates = new ArrayList<>();
        for (StandInCatalog catalog : catalogs.values()) {
            for (ObjectPath path : catalog.touched) {
                if (catalog.isDerived(path) && !catalog.columns(path).contains(column)) {
                    candidates.add(new Object[] {catalog, path});
                }
            }
        }
        if (candidates.isEmpty()) {
            return false;
        }
        // The planner also probes prefixes of longer names (`a.b` of `a.b.c`) as tables: a table
        // the statement names as a table comes first, and the one its alias names before that.
        Object[] chosen = null;
        for (Object[] candidate : candidates) {
            if (chosen == null && named(statement, ((ObjectPath) candidate[1]).getObjectName())) {
                chosen = candidate;
            }
        }
        if (alias != null) {
            for (Object[] candidate : candidates) {
                ObjectPath path = (ObjectPath) candidate[1];
                if (path.getObjectName().equalsIgnoreCase(alias) || aliased(statement, path.getObjectName(), alias)) {
                    chosen = candidate;
                    break;
                }
            }
        }
        if (chosen == null) {
            chosen = candidates.get(0);
        }
        ((StandInCatalog) chosen[0]).addColumn((ObjectPath) chosen[1], column, DEFAULT_TYPE);
        return true;
    }

    /** `name: TYPE, other: TYPE<..>` (Flink's summary of a row) -> [name, type] pairs. */
    private static List<String[]> fields(String row) {
        List<String[]> out = new ArrayList<>();
        int depth = 0;
        int start = 0;
        String text = row + ",";
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '<' || c == '(') {
                depth++;
            } else if (c == '>' || c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                String field = text.substring(start, i).trim();
                int colon = field.indexOf(':');
                if (colon > 0) {
                    out.add(new String[] {field.substring(0, colon).trim(), field.substring(colon + 1).trim()});
                }
                start = i + 1;
            }
        }
        return out;
    }

    private static String plain(String type) {
        return type.replace(" NOT NULL", "").replace(" *ROWTIME*", "").replace(" *PROCTIME*", "");
    }

    private boolean retypeSink(String sink, String column, String type) {
        ObjectIdentifier id;
        try {
            id = tEnv.getCatalogManager().qualifyIdentifier(tEnv.getParser().parseIdentifier(sink));
        } catch (RuntimeException e) {
            return false;
        }
        StandInCatalog catalog = catalogs.get(id.getCatalogName());
        ObjectPath path = id.toObjectPath();
        if (catalog == null || !catalog.isDerived(path) || type.equals(catalog.columnType(path, column))) {
            return false;
        }
        catalog.setColumnType(path, column, type);
        return true;
    }

    /** Gives a learnt (still STRING) column of that name the type its sink column has. */
    private boolean retype(String column, String type) {
        for (StandInCatalog catalog : catalogs.values()) {
            for (ObjectPath path : catalog.touched) {
                if (catalog.isDerived(path) && DEFAULT_TYPE.equals(catalog.columnType(path, column))
                        && !DEFAULT_TYPE.equals(type)) {
                    catalog.setColumnType(path, column, type.replace(" *ROWTIME*", "").replace(" *PROCTIME*", ""));
                    return true;
                }
            }
        }
        return false;
    }

    /** Gives the first learnt (still STRING) column compared with `=` in the statement the key's type. */
    private boolean retypeJoinKey(String type, String statement) {
        for (StandInCatalog catalog : catalogs.values()) {
            for (ObjectPath path : catalog.touched) {
                if (!catalog.isDerived(path)) {
                    continue;
                }
                for (String column : catalog.columns(path)) {
                    String quoted = Pattern.quote(column);
                    Pattern compared = Pattern.compile("(?i)(?:[\\w`]+\\.)?`?" + quoted + "`?\\s*=|=\\s*(?:[\\w`]+\\.)?`?"
                            + quoted + "`?\\b");
                    if (DEFAULT_TYPE.equals(catalog.columnType(path, column)) && compared.matcher(statement).find()) {
                        catalog.setColumnType(path, column, type);
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private static boolean aliased(String statement, String table, String alias) {
        Pattern pattern = Pattern.compile(
                "[`]?" + Pattern.quote(table) + "[`]?\\s+(?:FOR\\s+SYSTEM_TIME\\s+AS\\s+OF\\s+[\\w.`()]+\\s+)?"
                        + "(?:AS\\s+)?[`]?" + Pattern.quote(alias) + "\\b",
                Pattern.CASE_INSENSITIVE);
        return pattern.matcher(statement).find();
    }

    /** The statement names it as a table (the last part of a name), not as a qualifier. */
    private static boolean named(String statement, String table) {
        Pattern pattern = Pattern.compile(
                "(?<![\\w`])`?" + Pattern.quote(table) + "`?(?![\\w`]|\\s*\\.)", Pattern.CASE_INSENSITIVE);
        return pattern.matcher(statement).find();
    }
}
