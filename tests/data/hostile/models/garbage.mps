garbage
