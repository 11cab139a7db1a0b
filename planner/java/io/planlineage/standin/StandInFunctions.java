package io.planlineage.standin;

import java.io.File;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.catalog.CatalogFunction;
import org.apache.flink.table.catalog.FunctionLanguage;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.functions.UserDefinedFunction;
import org.apache.flink.table.operations.Operation;
import org.apache.flink.table.operations.ddl.CreateCatalogFunctionOperation;
import org.apache.flink.table.operations.ddl.CreateTempSystemFunctionOperation;

/**
 * Stands in for functions whose implementation the analyser cannot load: a Java/Scala class that
 * is on no jar it was given, or any Python function (the analyser runs no Python code). The
 * stand-in has the function's name, accepts any arguments and returns the type the script's usage
 * implies (hints computed in Python from the SQL text, see planner/function_usage.py), so the
 * statements using it plan exactly as they would with the real class: the tables read and written
 * do not depend on what a function computes.
 */
final class StandInFunctions {

    /** What a function's type is taken to be when the script gives no hint. */
    static final String DEFAULT_TYPE = "STRING";

    private final TableEnvironment tEnv;
    private final Supplier<ClassLoader> classLoader;
    private final Map<String, Map<String, Object>> hints = new LinkedHashMap<>();
    private final List<Map<String, Object>> used = new ArrayList<>();
    /** The stand-ins that the views a statement may read were typed with (StandInViews). */
    private Supplier<List<StandInResult>> throughViews = Collections::emptyList;
    /** The stand-ins whose types could not be fitted to the last statement refused (learning). */
    private List<StandInResult> suspected = Collections.emptyList();
    /** Steps of the current action passed (see passed). */
    private int passed;
    /** What each stand-in of `used` returns, in the same order. */
    private final List<StandInResult> results = new ArrayList<>();

    /** Rejections fixed in a row in one statement, each by one stand-in's type. */
    private static final int MAX_ROUNDS = 8;
    /**
     * Validations tried for one statement at most: each costs a few milliseconds (a statement
     * refused by its sink is also planned, with one type to try per stand-in). A count, not a
     * time, so that a script gets the same answer on a busy machine; the caller's job timeout
     * bounds the time.
     */
    private static final int MAX_TRIALS = 64;
    /** Type text in Flink's and Calcite's messages: call arguments, expected forms, CAST targets. */
    private static final Pattern[] TYPE_TEXT = {
        Pattern.compile("Invalid function call:\\s*[\\w$.`]+\\((.*)\\)"),
        Pattern.compile("<([A-Z][^<>]*(?:<[^<>]*>[^<>]*)*)>"),
        Pattern.compile("\\bto type ([A-Z][\\w(), <>]*?)(?:$|\\n|\\.\\s)"),
        Pattern.compile("implicit type conversion between (.+?) and (?:.+?) is not supported"),
        Pattern.compile("implicit type conversion between (?:.+?) and (.+?) is not supported"),
    };
    /** Refusals that no function's type causes: a parse error, a name that is not there. */
    private static final Pattern NO_TYPE_FIXES = Pattern.compile(
            "SQL parse failed|Column '[^']*' not found|Object '[^']*' not found|Table '[^']*' not found"
                    + "|Unknown target column");
    private static final Pattern SINK_COLUMN = Pattern.compile(
            "(?s)Incompatible types for sink column '([^']+)'.*?Sink schema:\\s*\\[(.*?)\\]");
    /** Calcite's operand families, as types a stand-in can have. */
    private static final Map<String, String> FAMILIES = new LinkedHashMap<>();
    /** Tried after the types a message names. */
    private static final List<String> COMMON = Arrays.asList(
            "BOOLEAN", "INT", "BIGINT", "DOUBLE", "DECIMAL(38, 18)", "TIMESTAMP(3)", "DATE", "TIME(0)",
            "TIMESTAMP_LTZ(3)", "BYTES", "ARRAY<STRING>", "MAP<STRING, STRING>", "ARRAY<INT>", "ARRAY<BIGINT>",
            "MAP<STRING, INT>", "MAP<STRING, BIGINT>", "MAP<STRING, DOUBLE>");

    /** The words a rejection may spell a type's head by. */
    private static final Map<String, String> SPELLINGS = new LinkedHashMap<>();

    static {
        SPELLINGS.put("INT", "INT|INTEGER");
        SPELLINGS.put("STRING", "STRING|VARCHAR|CHAR");
        SPELLINGS.put("BYTES", "BYTES|VARBINARY|BINARY");
        SPELLINGS.put("TIMESTAMP_LTZ", "TIMESTAMP_LTZ|TIMESTAMP_WITH_LOCAL_TIME_ZONE|LOCAL TIME ZONE");
        SPELLINGS.put("DECIMAL", "DECIMAL|NUMERIC");
        FAMILIES.put("NUMERIC", "INT;BIGINT;DOUBLE;DECIMAL(38, 18)");
        FAMILIES.put("INTEGER", "INT;BIGINT");
        FAMILIES.put("EXACT_NUMERIC", "INT;BIGINT;DECIMAL(38, 18)");
        FAMILIES.put("APPROXIMATE_NUMERIC", "DOUBLE");
        FAMILIES.put("DATETIME", "TIMESTAMP(3);DATE;TIME(0);TIMESTAMP_LTZ(3)");
        FAMILIES.put("TIMESTAMP", "TIMESTAMP(3);TIMESTAMP_LTZ(3)");
        FAMILIES.put("DATETIME_INTERVAL", "INTERVAL DAY TO SECOND(3);INTERVAL YEAR TO MONTH");
        FAMILIES.put("ARRAY", "ARRAY<STRING>;ARRAY<INT>;ARRAY<BIGINT>");
        FAMILIES.put("MAP", "MAP<STRING, STRING>;MAP<STRING, INT>;MAP<STRING, BIGINT>");
        FAMILIES.put("MULTISET", "MULTISET<STRING>");
        FAMILIES.put("BINARY", "BYTES");
        FAMILIES.put("CHARACTER", "STRING");
        for (String skipped : new String[] {"ANY", "SYMBOL", "COMPARABLE_TYPE", "ARRAY ELEMENT", "NULL", "ROW"}) {
            FAMILIES.put(skipped, "");
        }
    }

    StandInFunctions(TableEnvironment tEnv, Supplier<ClassLoader> classLoader) {
        this.tEnv = tEnv;
        this.classLoader = classLoader;
    }

    void readThroughViews(Supplier<List<StandInResult>> standIns) {
        this.throughViews = standIns;
    }

    /** kind: scalar, table or aggregate; type: the result (SQL type text) or null; fields: table rows. */
    void hint(String name, String kind, String type, List<String> fields) {
        Map<String, Object> hint = new LinkedHashMap<>();
        hint.put("kind", kind);
        hint.put("type", type);
        hint.put("fields", fields == null ? Collections.emptyList() : new ArrayList<>(fields));
        hints.put(name.toLowerCase(Locale.ROOT), hint);
    }

    List<Map<String, Object>> used() {
        for (int i = 0; i < used.size(); i++) {
            StandInResult result = results.get(i);
            used.get(i).put("result_type", result.fields == null ? result.type : StandInTableFunction.rowType(result.fields));
        }
        return used;
    }

    /**
     * The stand-ins (their records, as used() gives them) that the last refused statement called
     * and that no type learnt from the refusal fitted: the refusal may be their limit.
     */
    List<Map<String, Object>> suspected() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            if (suspected.contains(results.get(i))) {
                out.add(used.get(i));
            }
        }
        return out;
    }

    /** The stand-ins' types now, to tell whether learning changed any. */
    String types() {
        StringBuilder out = new StringBuilder();
        for (StandInResult result : results) {
            out.append(String.join("\u0000", snapshot(result))).append('\u0001');
        }
        return out.toString();
    }

    /** Registers a stand-in instead of running the operation; false when the real function loads. */
    boolean intercept(Operation operation) {
        if (operation instanceof CreateCatalogFunctionOperation) {
            CreateCatalogFunctionOperation create = (CreateCatalogFunctionOperation) operation;
            ObjectIdentifier id = create.getFunctionIdentifier();
            String reason = missing(create.getCatalogFunction());
            if (reason == null) {
                return false;
            }
            UserDefinedFunction function = build(id.getObjectName(), create.getCatalogFunction(), reason, id.asSummaryString());
            try {
                tEnv.createTemporaryFunction(id.asSerializableString(), function);
            } catch (RuntimeException e) {
                if (!create.isIgnoreIfExists()) {
                    throw e;
                }
            }
            return true;
        }
        if (operation instanceof CreateTempSystemFunctionOperation) {
            CreateTempSystemFunctionOperation create = (CreateTempSystemFunctionOperation) operation;
            CatalogFunction catalogFunction = create.getCatalogFunction();
            if (catalogFunction == null) {
                return false; // an inline instance: nothing to load
            }
            String reason = missing(catalogFunction);
            if (reason == null) {
                return false;
            }
            String name = create.getFunctionName();
            tEnv.createTemporarySystemFunction(name, build(name, catalogFunction, reason, name));
            return true;
        }
        return false;
    }

    /** Why the function cannot be the real one, or null when it can. */
    private String missing(CatalogFunction function) {
        if (function.getFunctionLanguage() == FunctionLanguage.PYTHON) {
            return "Python function (the analyser runs no Python)";
        }
        List<?> resources = Versions.functionResources(function);
        if (resources != null && !resources.isEmpty()) {
            for (Object resource : resources) {
                String uri = Versions.resourceUri(resource);
                if (!localFile(uri)) {
                    return "its jar " + uri + " is not readable here";
                }
            }
            return null; // local jars: Flink loads them for real
        }
        try {
            Class.forName(function.getClassName(), false, classLoader.get());
            return null;
        } catch (ClassNotFoundException | LinkageError e) {
            return "class " + function.getClassName() + " is on no jar given";
        }
    }

    private static boolean localFile(String uri) {
        try {
            URI parsed = new URI(uri);
            String scheme = parsed.getScheme();
            if (scheme == null) {
                return new File(uri).isFile();
            }
            return "file".equals(scheme) && new File(parsed).isFile();
        } catch (Exception e) {
            return false;
        }
    }

    private UserDefinedFunction build(String name, CatalogFunction function, String reason, String shown) {
        Map<String, Object> hint = hints.get(name.toLowerCase(Locale.ROOT));
        String kind = hint == null ? "scalar" : String.valueOf(hint.get("kind"));
        String type = hint == null || hint.get("type") == null ? DEFAULT_TYPE : String.valueOf(hint.get("type"));
        @SuppressWarnings("unchecked")
        List<String> fields = hint == null ? Collections.<String>emptyList() : (List<String>) hint.get("fields");
        UserDefinedFunction standIn;
        StandInResult result;
        if ("table".equals(kind)) {
            List<String> types = new ArrayList<>();
            for (String field : fields.isEmpty() ? Collections.singletonList((String) null) : fields) {
                types.add(field == null ? DEFAULT_TYPE : field);
            }
            result = new StandInResult(null, types);
            standIn = new StandInTableFunction(result);
        } else if ("aggregate".equals(kind)) {
            result = new StandInResult(type, null);
            standIn = new StandInAggregateFunction(result);
        } else {
            kind = "scalar";
            result = new StandInResult(type, null);
            standIn = new StandInScalarFunction(result);
        }
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("kind", "function");
        record.put("name", shown);
        record.put("class", function.getClassName());
        record.put("language", function.getFunctionLanguage().name());
        record.put("function_kind", kind);
        record.put("result_type", null); // filled in by used(): the planner may still retype it
        record.put("reason", reason);
        used.add(record);
        results.add(result);
        return standIn;
    }

    /**
     * Runs an action (a statement's parse and validation), and when the planner rejects it while a
     * stand-in was in use, gives the stand-ins the types the rejection points to: each type named in
     * Flink's message (a typed function's arguments and expected forms, a CAST's target, a sink
     * column's type), an array of it, then the common types, one at a time, validating again. A type
     * is kept when the statement then validates, or gets further (more sinks planned or stand-in
     * calls typed before the next rejection, or as many and a rejection that no longer names the
     * type), which is then fixed the
     * same way; a rejection left after that is the statement's error. When no type gets further,
     * every stand-in gets its type back and the planner's first rejection is the error. Nothing of
     * this runs unless a statement is rejected.
     */
    <T> T learning(Callable<T> action) throws Exception {
        clearCounts();
        try {
            return action.call();
        } catch (Exception rejected) {
            suspected = Collections.emptyList();
            if (results.isEmpty() || NO_TYPE_FIXES.matcher(messages(rejected)).find()) {
                throw rejected;
            }
            // A statement that called no stand-in may read one's result through a view: the
            // views' stand-ins are then the ones to type (StandInViews creates the views again).
            List<StandInResult> suspects = inferences() > 0 ? touched() : throughViews.get();
            if (suspects.isEmpty()) {
                throw rejected;
            }
            suspected = suspects;
            T done = relearn(action, rejected, suspects);
            suspected = Collections.emptyList();
            return done;
        }
    }

    private <T> T relearn(Callable<T> action, Exception rejected, List<StandInResult> suspects) throws Exception {
        List<String[]> before = new ArrayList<>();
        for (StandInResult result : results) {
            before.add(snapshot(result));
        }
        Exception current = rejected;
        int reached = inferences();
        List<StandInResult> touched = suspects;
        int trials = 0;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            List<String> candidates = candidates(messages(current));
            Object[] further = null; // {result, slot, type, error, reached, touched}
            // the likeliest type first, on every stand-in the statement uses
            search:
            for (String candidate : candidates) {
                for (StandInResult result : touched) {
                    for (int slot = 0; slot < result.slots(); slot++) {
                        String was = result.get(slot);
                        if (candidate.equals(was) || trials++ >= MAX_TRIALS) {
                            continue;
                        }
                        result.set(slot, candidate);
                        clearCounts();
                        try {
                            return action.call();
                        } catch (Exception again) {
                            int now = inferences();
                            String said = messages(again);
                            if (further == null && !said.equals(messages(current))
                                    && (now > reached || now == reached && !names(said, candidate))) {
                                further = new Object[] {result, slot, candidate, again, now, touched()};
                                result.set(slot, was);
                                break search;
                            }
                        }
                        result.set(slot, was);
                    }
                }
            }
            if (further == null) {
                break;
            }
            ((StandInResult) further[0]).set((Integer) further[1], (String) further[2]);
            current = (Exception) further[3];
            reached = (Integer) further[4];
            @SuppressWarnings("unchecked")
            List<StandInResult> next = (List<StandInResult>) further[5];
            touched = next.isEmpty() ? touched : next;
        }
        if (current != rejected) {
            throw current; // the stand-ins now fit further: what is left is the statement's own
        }
        for (int i = 0; i < results.size(); i++) {
            restore(results.get(i), before.get(i));
        }
        throw rejected;
    }

    /** Types worth trying for a stand-in, in order, from the text of the planner's rejection. */
    static List<String> candidates(String message) {
        List<String> named = new ArrayList<>();
        Matcher sink = SINK_COLUMN.matcher(message);
        if (sink.find()) {
            // only the sink column's own type fits it
            for (String field : depthZero(sink.group(2))) {
                int colon = field.indexOf(':');
                if (colon > 0 && field.substring(0, colon).trim().replace("`", "").equals(sink.group(1))) {
                    return Collections.singletonList(plain(field.substring(colon + 1)));
                }
            }
            return Collections.emptyList();
        }
        for (Pattern pattern : TYPE_TEXT) {
            Matcher found = pattern.matcher(message);
            while (found.find()) {
                for (String part : depthZero(found.group(1))) {
                    named.add(part);
                }
            }
        }
        // the types named (an operand's type is what a comparison wants), then arrays of them
        // (what a function of elements wants), then Calcite's families, then the common types
        LinkedHashSet<String> out = new LinkedHashSet<>();
        List<String> families = new ArrayList<>();
        for (String text : named) {
            String type = plain(text);
            String family = FAMILIES.get(type);
            if (family != null) {
                families.addAll(Arrays.asList(family.split(";")));
            } else if (!type.isEmpty() && Character.isLetter(type.charAt(0))) {
                out.add(type);
            }
        }
        for (String type : new ArrayList<>(out)) {
            out.add("ARRAY<" + type + ">");
        }
        for (String member : families) {
            if (!member.isEmpty()) {
                out.add(member);
            }
        }
        out.addAll(COMMON);
        return new ArrayList<>(out);
    }

    /**
     * Whether a rejection names the type (in Flink's or Calcite's spelling): a new rejection that
     * does not is about another use, so the type fitted this one.
     */
    static boolean names(String message, String type) {
        Matcher head = Pattern.compile("^[A-Z_]+").matcher(type);
        if (!head.find()) {
            return true;
        }
        String word = SPELLINGS.getOrDefault(head.group(), head.group());
        return Pattern.compile("\\b(?:" + word + ")\\b").matcher(message).find();
    }

    /** A type as the stand-in is given it: no nullability or time attribute, strings as STRING. */
    private static String plain(String text) {
        String type = text.trim().replace(" NOT NULL", "").replace(" *ROWTIME*", "").replace(" *PROCTIME*", "");
        type = type.replaceAll("\\b(?:VAR)?CHAR\\(\\d+\\)", "STRING").replaceAll("^[a-z_]\\w*\\s+(?=[A-Z])", "");
        Matcher postfix = Pattern.compile("^(.+?) (ARRAY|MULTISET)$").matcher(type);
        return postfix.matches() ? postfix.group(2) + "<" + plain(postfix.group(1)) + ">" : type;
    }

    /** `A, B<C, D>` -> [A, B<C, D>]. */
    private static List<String> depthZero(String text) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i <= text.length(); i++) {
            char c = i < text.length() ? text.charAt(i) : ',';
            if (c == '<' || c == '(') {
                depth++;
            } else if (c == '>' || c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                parts.add(text.substring(start, i).trim());
                start = i + 1;
            }
        }
        return parts;
    }

    private static String messages(Throwable error) {
        StringBuilder out = new StringBuilder();
        int seen = 0;
        for (Throwable cause = error; cause != null && seen < 30; seen++) {
            out.append(cause.getMessage()).append('\n');
            cause = cause.getCause() == cause ? null : cause.getCause();
        }
        return out.toString();
    }

    /** A step of the action passed (a sink planned): the statement got further. */
    void passed() {
        passed++;
    }

    /** Forgets how far the last run got (a run of the action starts from nothing). */
    void clearCounts() {
        passed = 0;
        for (StandInResult result : results) {
            result.inferences = 0;
        }
    }

    /** How far the last run of the action got: the steps it passed, then the stand-in calls it typed. */
    private int inferences() {
        int count = passed * 100_000;
        for (StandInResult result : results) {
            count += result.inferences;
        }
        return count;
    }

    /** The stand-ins the last validation typed, so far as it went. */
    List<StandInResult> touched() {
        List<StandInResult> out = new ArrayList<>();
        for (StandInResult result : results) {
            if (result.inferences > 0) {
                out.add(result);
            }
        }
        return out;
    }

    private static String[] snapshot(StandInResult result) {
        String[] types = new String[result.slots()];
        for (int slot = 0; slot < types.length; slot++) {
            types[slot] = result.get(slot);
        }
        return types;
    }

    private static void restore(StandInResult result, String[] types) {
        for (int slot = 0; slot < types.length; slot++) {
            result.set(slot, types[slot]);
        }
    }
}
