int dummy_deadbranch;
