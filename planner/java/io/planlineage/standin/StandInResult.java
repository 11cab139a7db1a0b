package io.planlineage.standin;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * What a stand-in function returns: one type (scalar, aggregate) or the field types of a table
 * function's rows. Shared by the stand-in and {@link StandInFunctions}, which changes it when the
 * planner rejects a use of the function (see StandInFunctions#learning): the planner asks for a
 * function's type inference each time it validates a call, so the next validation sees the change.
 */
final class StandInResult implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Scalar and aggregate functions: the result type (SQL type text). */
    volatile String type;
    /** Table functions: the type of each field of the rows. */
    final List<String> fields;
    /** How many times the planner asked for the type since the last count was cleared. */
    transient volatile int inferences;

    StandInResult(String type, List<String> fields) {
        this.type = type;
        this.fields = fields == null ? null : new ArrayList<>(fields);
    }

    /** The places a type can change: the result of a scalar or aggregate (one), or each field. */
    int slots() {
        return fields == null ? 1 : fields.size();
    }

    String get(int slot) {
        return fields == null ? type : fields.get(slot);
    }

    void set(int slot, String value) {
        if (fields == null) {
            type = value;
        } else {
            fields.set(slot, value);
        }
    }

    void inferred() {
        inferences++;
    }
}
