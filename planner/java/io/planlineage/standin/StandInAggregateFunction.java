package io.planlineage.standin;

import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.functions.AggregateFunction;
import org.apache.flink.table.types.inference.InputTypeStrategies;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.table.types.inference.TypeStrategies;

/**
 * An aggregate function of any arguments returning a fixed type; planned, never run. It declares
 * retract and merge so that no changelog or two-phase plan is refused for lack of them (the real
 * function may well have them; the tables read are the same either way).
 */
public final class StandInAggregateFunction extends AggregateFunction<Object, Object> {
    private static final long serialVersionUID = 1L;

    private final StandInResult result;

    public StandInAggregateFunction(StandInResult result) {
        this.result = result;
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        result.inferred();
        return TypeInference.newBuilder()
                .inputTypeStrategy(InputTypeStrategies.WILDCARD)
                .accumulatorTypeStrategy(TypeStrategies.explicit(DataTypes.STRING()))
                .outputTypeStrategy(TypeStrategies.explicit(StandInTypes.parse(typeFactory, result.type)))
                .build();
    }

    @Override
    public Object createAccumulator() {
        return null;
    }

    @Override
    public Object getValue(Object accumulator) {
        return null;
    }

    public void accumulate(Object accumulator, Object... values) {}

    public void retract(Object accumulator, Object... values) {}

    public void merge(Object accumulator, Iterable<Object> others) {}

    public void resetAccumulator(Object accumulator) {}

    @Override
    public boolean isDeterministic() {
        return false;
    }
}
