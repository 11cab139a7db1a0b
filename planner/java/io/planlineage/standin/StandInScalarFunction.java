package io.planlineage.standin;

import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.functions.ScalarFunction;
import org.apache.flink.table.types.inference.InputTypeStrategies;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.table.types.inference.TypeStrategies;

/** A scalar function of any arguments returning a fixed type; planned, never run. */
public final class StandInScalarFunction extends ScalarFunction {
    private static final long serialVersionUID = 1L;

    private final StandInResult result;

    public StandInScalarFunction(StandInResult result) {
        this.result = result;
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        result.inferred();
        return TypeInference.newBuilder()
                .inputTypeStrategy(InputTypeStrategies.WILDCARD)
                .outputTypeStrategy(TypeStrategies.explicit(StandInTypes.parse(typeFactory, result.type)))
                .build();
    }

    /** Required to exist by Flink's registration checks; never called (the job is never run). */
    public Object eval(Object... arguments) {
        return null;
    }

    /** Not deterministic, so that the planner never folds a call with constant arguments (it would run it). */
    @Override
    public boolean isDeterministic() {
        return false;
    }
}
