package io.quarkiverse.mysqllock.runtime.table;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * A shipped DDL file of the schema location: one {@code CREATE TABLE IF NOT EXISTS} statement, a Flyway repeatable
 * migration that Liquibase and the extension run too. The extension runs it without its comments and its final
 * semicolon, with the configured table name.
 */
final class SchemaFile {

    private SchemaFile() {
    }

    /**
     * The statement of {@code resource}, creating {@code table} where the file creates {@code shippedName}.
     */
    static String statement(String resource, String shippedName, String table) {
        try (InputStream in = SchemaFile.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("The resource " + resource + " is missing from the classpath");
            }
            StringBuilder ddl = new StringBuilder();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.startsWith("--")) {
                    ddl.append(line).append('\n');
                }
            }
            String statement = ddl.toString().strip();
            statement = statement.endsWith(";") ? statement.substring(0, statement.length() - 1) : statement;
            return statement.replace("EXISTS " + shippedName + " (", "EXISTS " + table + " (");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
