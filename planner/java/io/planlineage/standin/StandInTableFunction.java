package io.planlineage.standin;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.functions.TableFunction;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.inference.InputTypeStrategies;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.table.types.inference.TypeStrategies;
import org.apache.flink.types.Row;

/** A table function of any arguments producing rows of the given field types; planned, never run. */
public final class StandInTableFunction extends TableFunction<Row> {
    private static final long serialVersionUID = 1L;

    private final StandInResult result;

    public StandInTableFunction(StandInResult result) {
        this.result = result;
    }

    static String rowType(List<String> types) {
        StringBuilder out = new StringBuilder("ROW<");
        for (int i = 0; i < types.size(); i++) {
            out.append(i == 0 ? "" : ", ").append("f").append(i).append(' ').append(types.get(i));
        }
        return out.append('>').toString();
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        result.inferred();
        List<String> fieldTypes = new ArrayList<>(result.fields);
        DataTypes.Field[] fields = new DataTypes.Field[fieldTypes.size()];
        for (int i = 0; i < fields.length; i++) {
            fields[i] = DataTypes.FIELD("f" + i, StandInTypes.parse(typeFactory, fieldTypes.get(i)));
        }
        DataType row = DataTypes.ROW(fields);
        return TypeInference.newBuilder()
                .inputTypeStrategy(InputTypeStrategies.WILDCARD)
                .outputTypeStrategy(TypeStrategies.explicit(row))
                .build();
    }

    /** Required to exist by Flink's registration checks; never called (the job is never run). */
    public void eval(Object... arguments) {}

    @Override
    public boolean isDeterministic() {
        return false;
    }
}
