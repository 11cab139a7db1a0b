package io.planlineage.standin;

import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.types.DataType;

/** SQL type text (from a CAST or a sink column) to a DataType, with the documented default. */
final class StandInTypes {
    private StandInTypes() {}

    static DataType parse(DataTypeFactory factory, String type) {
        if (type == null || type.trim().isEmpty()) {
            return DataTypes.STRING();
        }
        try {
            return factory.createDataType(type);
        } catch (RuntimeException e) {
            return DataTypes.STRING(); // a hint Flink cannot read must not fail the compile
        }
    }
}
