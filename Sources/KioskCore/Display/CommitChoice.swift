/// How the user asked for the commit API (`--commit`, the config file's and the board file's `commit`). A plain value.
public enum CommitChoice: String, Sendable, CaseIterable {
    case atomic, legacy, auto
}
