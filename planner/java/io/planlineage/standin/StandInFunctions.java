package io.planlineage.standin;

import java.io.File;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

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
 * is on no jar it was given, or any Python function (the analyser runs no Python workers). The
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

    StandInFunctions(TableEnvironment tEnv, Supplier<ClassLoader> classLoader) {
        this.tEnv = tEnv;
        this.classLoader = classLoader;
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
        return used;
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
        String result;
        if ("table".equals(kind)) {
            List<String> types = new ArrayList<>();
            for (String field : fields.isEmpty() ? Collections.singletonList((String) null) : fields) {
                types.add(field == null ? DEFAULT_TYPE : field);
            }
            standIn = new StandInTableFunction(types);
            result = StandInTableFunction.rowType(types);
        } else if ("aggregate".equals(kind)) {
            standIn = new StandInAggregateFunction(type);
            result = type;
        } else {
            kind = "scalar";
            standIn = new StandInScalarFunction(type);
            result = type;
        }
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("kind", "function");
        record.put("name", shown);
        record.put("class", function.getClassName());
        record.put("language", function.getFunctionLanguage().name());
        record.put("function_kind", kind);
        record.put("result_type", result);
        record.put("reason", reason);
        used.add(record);
        return standIn;
    }
}
