// Placeholder until the CLI lands (being written now).
int main() { return 0; }
