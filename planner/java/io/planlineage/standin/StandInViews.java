package io.planlineage.standin;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.table.api.internal.TableEnvironmentInternal;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.operations.Operation;

/**
 * The views a job creates, kept in step with its stand-in functions' types. Flink stores a view
 * with the row type its query had when it was created and casts the view's query back to that
 * type wherever the view is read. A stand-in typed later from a use through the view (an aggregate
 * whose result an ARRAY_CONTAINS reads from a view) would stay cast to its first type there, and no
 * type learnt could ever fit. So before a statement is parsed, every view created while the
 * stand-ins had other types is created again from its statement, in the order the script created
 * them (a view over a view comes after it). Nothing of this runs while no stand-in changes type.
 */
final class StandInViews {

    private final TableEnvironmentInternal tEnv;
    private final StandInFunctions functions;
    private final List<View> views = new ArrayList<>();

    private static final class View {
        final String statement;
        final ObjectIdentifier identifier;
        final boolean temporary;
        /** The stand-ins' types when the view was last created (StandInFunctions#types). */
        String types;
        /** The stand-ins its query calls. */
        final List<StandInResult> standIns;

        View(String statement, ObjectIdentifier identifier, boolean temporary, String types, List<StandInResult> standIns) {
            this.statement = statement;
            this.identifier = identifier;
            this.temporary = temporary;
            this.types = types;
            this.standIns = standIns;
        }
    }

    StandInViews(TableEnvironmentInternal tEnv, StandInFunctions functions) {
        this.tEnv = tEnv;
        this.functions = functions;
        functions.readThroughViews(this::standIns);
    }

    /** The stand-ins some view's query calls, each once. */
    private List<StandInResult> standIns() {
        List<StandInResult> out = new ArrayList<>();
        for (View view : views) {
            for (StandInResult result : view.standIns) {
                if (!out.contains(result)) {
                    out.add(result);
                }
            }
        }
        return out;
    }

    /**
     * A statement created a view with these operations (others are ignored), having just been
     * parsed: the stand-ins that parse typed are the ones its query calls.
     */
    void created(String statement, List<Operation> operations) {
        if (functions.used().isEmpty()) {
            return; // no stand-in function so far: no type of this view can change
        }
        for (Operation operation : operations) {
            if (!operation.getClass().getSimpleName().equals("CreateViewOperation")) {
                continue;
            }
            try {
                ObjectIdentifier id = (ObjectIdentifier) operation.getClass().getMethod("getViewIdentifier").invoke(operation);
                boolean temporary = (Boolean) operation.getClass().getMethod("isTemporary").invoke(operation);
                views.removeIf(view -> view.identifier.equals(id));
                views.add(new View(statement, id, temporary, functions.types(), functions.touched()));
            } catch (ReflectiveOperationException | ClassCastException e) {
                // a view this Flink describes otherwise is left as created
            }
        }
    }

    /**
     * Creates again the views made while the stand-ins had other types. The stand-in calls this
     * validates do not count as the statement's own progress (StandInFunctions#learning): the
     * counts are cleared after it, and when a view's own query refuses the types, before its error.
     */
    void refresh() throws Exception {
        if (views.isEmpty()) {
            return;
        }
        String now = functions.types();
        try {
            for (View view : views) {
                if (now.equals(view.types)) {
                    continue;
                }
                String path = view.identifier.asSerializableString();
                if (view.temporary) {
                    tEnv.dropTemporaryView(path);
                } else {
                    tEnv.getCatalogManager().dropView(view.identifier, true);
                }
                for (Operation operation : tEnv.getParser().parse(view.statement)) {
                    tEnv.executeInternal(operation);
                }
                view.types = now;
            }
        } finally {
            functions.clearCounts();
        }
    }
}
