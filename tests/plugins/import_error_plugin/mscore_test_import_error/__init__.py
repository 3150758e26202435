"""A deliberately broken mscore plugin: importing it fails, as a plugin with a missing
dependency would. mscore must report it and keep every other backend working."""
import mscore_dependency_that_does_not_exist
